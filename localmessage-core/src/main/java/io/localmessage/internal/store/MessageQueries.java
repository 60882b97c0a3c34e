package io.localmessage.internal.store;

import io.localmessage.MessageHeaders;
import io.localmessage.StoreException;
import io.localmessage.admin.AuditEntry;
import io.localmessage.admin.MessageView;
import io.localmessage.admin.TypeStats;
import io.localmessage.internal.dialect.Codes;
import io.localmessage.internal.dialect.Predicates;
import io.localmessage.spi.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Read-only queries for operators, the metrics and the claim loop's paused set: stats, finders,
 * listings and the audit trail. Each runs on a pooled connection in autocommit and is served by an
 * index; none scans the message table except the stats, which group it.
 */
public final class MessageQueries {
  private static final String COLUMNS_VIEW =
      "id, kind, biz_type, idem_key, aggregate_id,"
          + " destination, OCTET_LENGTH(payload), headers, status, attempts, max_attempts,"
          + " next_retry_at, lease_owner, version, last_error, created_at, updated_at";

  /** The most rows {@link #findByIdemKey} returns. */
  private static final int MAX_FOUND = 1000;

  private final DataSource dataSource;
  private final Dialect dialect;
  private final Tables tables;

  /** Queries over {@code tables}. */
  public MessageQueries(DataSource dataSource, Dialect dialect, Tables tables) {
    this.dataSource = dataSource;
    this.dialect = dialect;
    this.tables = tables;
  }

  /** The biz types paused cluster-wide. */
  public Set<String> pausedTypes() {
    Set<String> paused = new HashSet<>();
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps =
            c.prepareStatement("SELECT biz_type FROM " + tables.control() + " WHERE paused = 1");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        paused.add(rs.getString(1));
      }
      return paused;
    } catch (SQLException e) {
      throw new StoreException("reading paused types failed: " + e.getMessage(), e);
    }
  }

  /** The backlog of every biz type present in the table or in {@code paused}. */
  public List<TypeStats> stats(Set<String> paused) {
    String now = dialect.now();
    String sql =
        "SELECT biz_type, status, COUNT(*),"
            + " SUM(CASE WHEN next_retry_at <= "
            + now
            + " THEN 1 ELSE 0 END),"
            + " SUM(CASE WHEN lease_owner IS NOT NULL AND next_retry_at > "
            + now
            + " THEN 1 ELSE 0 END),"
            + " MIN(created_at), MIN(updated_at), MIN("
            + now
            + ")"
            + " FROM "
            + tables.message()
            + " GROUP BY biz_type, status";
    Map<String, long[]> counts = new TreeMap<>();
    Map<String, Duration[]> ages = new TreeMap<>();
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String type = rs.getString(1);
        int status = rs.getInt(2);
        long[] k = counts.computeIfAbsent(type, t -> new long[6]);
        Duration[] a =
            ages.computeIfAbsent(type, t -> new Duration[] {Duration.ZERO, Duration.ZERO});
        long n = rs.getLong(3);
        Instant dbNow = dialect.readInstant(rs, 8);
        if (status == Codes.PENDING) {
          k[0] = n;
          k[1] = rs.getLong(4);
          k[2] = rs.getLong(5);
          a[0] = age(dbNow, dialect.readInstant(rs, 6));
        } else if (status == Codes.DEAD) {
          k[3] = n;
          a[1] = age(dbNow, dialect.readInstant(rs, 7));
        } else if (status == Codes.CANCELED) {
          k[4] = n;
        } else if (status == Codes.SUCCEEDED) {
          k[5] = n;
        }
      }
    } catch (SQLException e) {
      throw new StoreException("reading stats failed", e);
    }
    for (String p : paused) {
      counts.computeIfAbsent(p, t -> new long[6]);
      ages.computeIfAbsent(p, t -> new Duration[] {Duration.ZERO, Duration.ZERO});
    }
    List<TypeStats> out = new ArrayList<>();
    for (Map.Entry<String, long[]> e : counts.entrySet()) {
      long[] k = e.getValue();
      Duration[] a = ages.get(e.getKey());
      out.add(
          new TypeStats(
              e.getKey(),
              k[0],
              k[1],
              k[2],
              k[3],
              k[4],
              k[5],
              a[0],
              a[1],
              paused.contains(e.getKey())));
    }
    return out;
  }

  private static Duration age(Instant now, Instant then) {
    if (now == null || then == null || then.isAfter(now)) {
      return Duration.ZERO;
    }
    return Duration.between(then, now);
  }

  /** DEAD messages of {@code bizType} (null: every type) with an id above {@code afterId}. */
  public List<MessageView> listDead(String bizType, long afterId, int limit) {
    String sql =
        "SELECT "
            + COLUMNS_VIEW
            + " FROM "
            + tables.message()
            + " WHERE status = 2 AND id > ?"
            + (bizType == null ? "" : " AND biz_type = ?")
            + " ORDER BY id";
    return views(
        sql,
        limit,
        ps -> {
          ps.setLong(1, afterId);
          if (bizType != null) {
            ps.setString(2, bizType);
          }
        });
  }

  /** One message. */
  public Optional<MessageView> get(long id) {
    return views(
            "SELECT " + COLUMNS_VIEW + " FROM " + tables.message() + " WHERE id = ?",
            1,
            ps -> ps.setLong(1, id))
        .stream()
        .findFirst();
  }

  /** The payload of one message. */
  public Optional<byte[]> payload(long id) {
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps =
            c.prepareStatement("SELECT payload FROM " + tables.message() + " WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        byte[] p = rs.getBytes(1);
        return Optional.of(p == null ? new byte[0] : p);
      }
    } catch (SQLException e) {
      throw new StoreException("reading payload of message " + id + " failed", e);
    }
  }

  /** The messages of an aggregate, oldest first. */
  public List<MessageView> findByAggregate(String aggregateId, int limit) {
    return views(
        "SELECT "
            + COLUMNS_VIEW
            + " FROM "
            + tables.message()
            + " WHERE aggregate_id = ? ORDER BY id",
        limit,
        ps -> ps.setString(1, aggregateId));
  }

  /**
   * The messages with this idempotency key, of any type. Served by the unique index {@code
   * (biz_type, idem_key)}: the types present are found by one index probe each, then one statement
   * probes the index for the key under each of them, so a search never scans the table (no extra
   * index on {@code idem_key} either, which every save would pay for).
   */
  public List<MessageView> findByIdemKey(String idemKey) {
    List<String> types = new ArrayList<>();
    String table = tables.message();
    for (String type = Jdbc.nextBizType(dataSource, table, null);
        type != null;
        type = Jdbc.nextBizType(dataSource, table, type)) {
      types.add(type);
    }
    List<MessageView> out = new ArrayList<>();
    for (int i = 0; i < types.size(); i += OperatorActions.OPERATOR_CHUNK) {
      List<String> chunk =
          types.subList(i, Math.min(types.size(), i + OperatorActions.OPERATOR_CHUNK));
      out.addAll(
          views(
              findByIdemKeySql(table, chunk.size()),
              MAX_FOUND,
              ps -> {
                int p = 1;
                for (String t : chunk) {
                  ps.setString(p++, t);
                }
                ps.setString(p, idemKey);
              }));
    }
    out.sort(Comparator.comparingLong(MessageView::id));
    return out.size() > MAX_FOUND ? out.subList(0, MAX_FOUND) : out;
  }

  /** The statement of {@link #findByIdemKey} for {@code types} biz types (a plan test reads it). */
  static String findByIdemKeySql(String table, int types) {
    return "SELECT "
        + COLUMNS_VIEW
        + " FROM "
        + table
        + " WHERE biz_type IN ("
        + Predicates.placeholders(types)
        + ") AND idem_key = ? ORDER BY id";
  }

  /** The audit trail of one message, oldest first. */
  public List<AuditEntry> audit(long messageId) {
    String sql =
        "SELECT id, ticket_id, biz_type, action, operator, reason, at FROM "
            + tables.audit()
            + " WHERE ticket_id = ? ORDER BY id";
    List<AuditEntry> out = new ArrayList<>();
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, messageId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new AuditEntry(
                  rs.getLong(1),
                  rs.getLong(2),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getString(5),
                  rs.getString(6),
                  dialect.readInstant(rs, 7)));
        }
      }
      return out;
    } catch (SQLException e) {
      throw new StoreException("reading the audit trail of message " + messageId + " failed", e);
    }
  }

  private List<MessageView> views(String sql, int limit, Jdbc.Binder binder) {
    List<MessageView> out = new ArrayList<>();
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      ps.setMaxRows(limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new MessageView(
                  rs.getLong(1),
                  Codes.kind(rs.getInt(2)),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getString(5),
                  rs.getString(6),
                  rs.getInt(7),
                  MessageHeaders.decodeForView(rs.getString(8)),
                  Codes.status(rs.getInt(9)),
                  rs.getInt(10),
                  rs.getInt(11),
                  dialect.readInstant(rs, 12),
                  rs.getString(13),
                  rs.getLong(14),
                  rs.getString(15),
                  dialect.readInstant(rs, 16),
                  dialect.readInstant(rs, 17)));
        }
      }
      return out;
    } catch (SQLException e) {
      throw new StoreException("reading messages failed", e);
    }
  }
}
