package io.localmessage.jdbc;

import io.localmessage.MessageKind;
import io.localmessage.MessageStatus;
import io.localmessage.StoreException;
import io.localmessage.TicketInFlightException;
import io.localmessage.admin.AuditEntry;
import io.localmessage.admin.TicketView;
import io.localmessage.admin.TypeStats;
import io.localmessage.internal.HeadersCodec;
import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.TicketRow;
import io.localmessage.spi.Transition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * The JDBC message store: every statement the engine, the admin API and the inbox run, built from
 * the {@link Dialect}'s pieces. Statements that run in the caller's transaction take its {@link
 * Connection}; the others borrow one from the data source for a single short transaction.
 */
public final class TicketStore {
  private static final String COLUMNS_VIEW =
      "id, kind, biz_type, idem_key, aggregate_id,"
          + " destination, OCTET_LENGTH(payload), headers, status, attempts, max_attempts,"
          + " next_retry_at, lease_owner, version, last_error, created_at, updated_at";

  /** Tickets moved to DEAD per sweep; the next sweep takes the rest. */
  private static final int EXPIRE_BATCH = 500;

  /** Ids per operator statement: far below every database's bind-parameter limit. */
  public static final int OPERATOR_CHUNK = 1000;

  private final DataSource dataSource;
  private final Dialect dialect;
  private final String table;
  private final String controlTable;
  private final String auditTable;
  private final String inboxTable;

  public TicketStore(DataSource dataSource, Dialect dialect, String table, String inboxTable) {
    this.dataSource = dataSource;
    this.dialect = dialect;
    this.table = table;
    this.controlTable = table + "_control";
    this.auditTable = table + "_audit";
    this.inboxTable = inboxTable;
  }

  public Dialect dialect() {
    return dialect;
  }

  public DataSource dataSource() {
    return dataSource;
  }

  public String table() {
    return table;
  }

  // ---------------------------------------------------------------- schema

  /** The DDL with this store's table names. */
  public String schemaDdl() {
    return schemaDdl(dialect, table, inboxTable);
  }

  /** The DDL of {@code dialect} with the given table names: every schema step, in order. */
  public static String schemaDdl(Dialect dialect, String table, String inboxTable) {
    String ddl = SchemaScripts.coreDdl(dialect);
    // index and constraint names derive from the table names, so two engines with different
    // tables can share a schema; a schema prefix applies to table names only
    String bare = table.contains(".") ? table.substring(table.indexOf('.') + 1) : table;
    String bareInbox =
        inboxTable.contains(".") ? inboxTable.substring(inboxTable.indexOf('.') + 1) : inboxTable;
    return ddl.replaceAll("(ix|uk)_local_message", "$1_" + bare)
        .replaceAll("(ix)_local_inbox", "$1_" + bareInbox)
        .replace("local_message", table)
        .replace("local_inbox", inboxTable);
  }

  /**
   * Creates the tables and indexes that are missing and brings existing ones up to the latest
   * schema step (the same changes a migration tool applies from the shipped scripts).
   */
  public void createSchema() {
    try (Connection c = dataSource.getConnection()) {
      SchemaScripts.apply(c, splitStatements(schemaDdl()));
      if (!c.getAutoCommit()) {
        c.commit();
      }
    } catch (SQLException e) {
      throw new StoreException("creating the localmessage schema failed: " + e.getMessage(), e);
    }
  }

  static List<String> splitStatements(String ddl) {
    return SchemaScripts.split(ddl);
  }

  // ---------------------------------------------------------------- save

  /** Inserts in the caller's transaction; returns the new id or -1 for a duplicate. */
  public long insert(Connection c, TicketRow row) throws SQLException {
    return dialect.insertIfAbsent(c, table, row);
  }

  /**
   * The id of the ticket with this key, or -1, as the latest committed state (and the caller's own
   * writes) show it, whatever the age of the caller's snapshot.
   */
  public long findId(Connection c, String bizType, String idemKey) throws SQLException {
    return dialect.existingId(c, table, bizType, idemKey);
  }

  // ---------------------------------------------------------------- worker

  public List<ClaimedRow> claim(ClaimRequest request) {
    try (Connection c = autocommitConnection()) {
      return dialect.claim(c, table, request);
    } catch (SQLException e) {
      throw new StoreException("claiming due tickets failed: " + e.getMessage(), e);
    }
  }

  public int deleteIfCurrent(long[] ids, long[] versions) {
    try (Connection c = autocommitConnection()) {
      return dialect.deleteIfCurrent(c, table, ids, versions);
    } catch (SQLException e) {
      throw new StoreException("deleting completed tickets failed: " + e.getMessage(), e);
    }
  }

  public int updateIfCurrent(List<Transition> transitions) {
    try (Connection c = autocommitConnection()) {
      return dialect.updateIfCurrent(c, table, transitions);
    } catch (SQLException e) {
      throw new StoreException("writing back ticket outcomes failed: " + e.getMessage(), e);
    }
  }

  /** Extends the leases of the tickets whose versions still match; returns the ids that did. */
  public Set<Long> renewLeases(long[] ids, long[] versions, long leaseMillis) {
    try (Connection c = autocommitConnection()) {
      return dialect.renewLeases(c, table, ids, versions, leaseMillis);
    } catch (SQLException e) {
      throw new StoreException("renewing leases failed: " + e.getMessage(), e);
    }
  }

  /** What one sweep of exhausted last attempts did: candidates found, tickets moved to DEAD. */
  public record Sweep(int found, int expired) {
    /** Whether the sweep stopped at its batch limit, so more candidates may be left. */
    public boolean limited() {
      return found >= EXPIRE_BATCH;
    }
  }

  /**
   * Moves to DEAD the tickets whose last allowed delivery was claimed and never reported back (the
   * worker died or overran its lease): invariant 6. At most {@value #EXPIRE_BATCH} per call.
   *
   * <p>With a {@code windowMillis} supplier only tickets whose lease ended in the last that many
   * milliseconds are looked at: a claim always sets the lease end in the future, so a sweeper that
   * covers consecutive windows sees every lease that runs out, and its cost follows the tickets
   * that fell due in the window instead of the whole due backlog (every row of which a full sweep
   * reads, because {@code attempts >= max_attempts} compares two columns no index can serve). The
   * supplier is asked right before the statement runs, after any wait for a connection, so a window
   * measured from the previous sweep leaves no gap. {@code null} looks at every due ticket.
   */
  public Sweep expireExhausted(
      Collection<String> bizTypes, String error, LongSupplier windowMillis) {
    if (bizTypes.isEmpty()) {
      return new Sweep(0, 0);
    }
    // Find candidates with a plain read first, then update them by id with every condition
    // checked again. A single UPDATE over the due range would, on InnoDB, lock every due ticket
    // it scans (the whole backlog) and make every replica's SKIP LOCKED claim come back empty.
    String exhausted =
        " AND status = 0 AND max_attempts > 0 AND attempts >= max_attempts AND next_retry_at <= "
            + dialect.now();
    String window =
        windowMillis != null ? " AND next_retry_at > " + dialect.plusMillis(dialect.now()) : "";
    String select =
        "SELECT id FROM "
            + table
            + " WHERE biz_type IN ("
            + LockingSelectDialect.placeholders(bizTypes.size())
            + ")"
            + exhausted
            + window
            + " ORDER BY next_retry_at LIMIT "
            + EXPIRE_BATCH;
    try (Connection c = autocommitConnection()) {
      java.util.List<Long> ids = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(select)) {
        int p = 1;
        for (String t : bizTypes) {
          ps.setString(p++, t);
        }
        if (windowMillis != null) {
          ps.setLong(p, -windowMillis.getAsLong());
        }
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            ids.add(rs.getLong(1));
          }
        }
      }
      if (ids.isEmpty()) {
        return new Sweep(0, 0);
      }
      String update =
          "UPDATE "
              + table
              + " SET status = 2, version = version + 1,"
              + " lease_owner = NULL, last_error = ?, updated_at = "
              + dialect.now()
              + " WHERE id IN ("
              + LockingSelectDialect.placeholders(ids.size())
              + ")"
              + exhausted;
      try (PreparedStatement ps = c.prepareStatement(update)) {
        int p = 1;
        ps.setString(p++, error);
        for (Long id : ids) {
          ps.setLong(p++, id);
        }
        return new Sweep(ids.size(), ps.executeUpdate());
      }
    } catch (SQLException e) {
      throw new StoreException("expiring exhausted tickets failed: " + e.getMessage(), e);
    }
  }

  public Set<String> pausedTypes() {
    Set<String> paused = new HashSet<>();
    try (Connection c = autocommitConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT biz_type FROM " + controlTable + " WHERE paused = 1");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        paused.add(rs.getString(1));
      }
      return paused;
    } catch (SQLException e) {
      throw new StoreException("reading paused types failed: " + e.getMessage(), e);
    }
  }

  // ---------------------------------------------------------------- admin

  public void setPaused(String bizType, boolean paused, String operator, String reason) {
    inTransaction(
        c -> {
          String update =
              "UPDATE "
                  + controlTable
                  + " SET paused = ?, updated_by = ?, reason = ?,"
                  + " updated_at = "
                  + dialect.now()
                  + " WHERE biz_type = ?";
          int n;
          try (PreparedStatement ps = c.prepareStatement(update)) {
            ps.setInt(1, paused ? 1 : 0);
            ps.setString(2, operator);
            ps.setString(3, reason);
            ps.setString(4, bizType);
            n = ps.executeUpdate();
          }
          if (n == 0) {
            try (PreparedStatement ps =
                c.prepareStatement(
                    "INSERT INTO "
                        + controlTable
                        + " (biz_type, paused, updated_by, reason, updated_at) VALUES (?, ?, ?, ?, "
                        + dialect.now()
                        + ")")) {
              ps.setString(1, bizType);
              ps.setInt(2, paused ? 1 : 0);
              ps.setString(3, operator);
              ps.setString(4, reason);
              ps.executeUpdate();
            }
          }
          audit(c, null, bizType, paused ? "PAUSE" : "RESUME", operator, reason);
          return null;
        },
        "pausing/resuming " + bizType);
  }

  /**
   * Cancels a PENDING or DEAD ticket; returns whether it moved. Refuses a ticket with a live lease
   * (PENDING, claimed, lease end after the database's now) with a {@link TicketInFlightException}.
   * The cancel sets {@code next_retry_at} to its own time, as every terminal transition does, so
   * the purge finds it through the due index.
   */
  public boolean cancel(long id, String operator, String reason) {
    return inTransaction(
        c -> {
          String bizType;
          try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT biz_type, status, lease_owner, next_retry_at,"
                      + " CASE WHEN next_retry_at > "
                      + dialect.now()
                      + " THEN 1 ELSE 0 END FROM "
                      + table
                      + " WHERE id = ? AND status IN (0, 2) FOR UPDATE")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return false;
              }
              bizType = rs.getString(1);
              String owner = rs.getString(3);
              boolean live = rs.getInt(2) == 0 && owner != null && rs.getInt(5) == 1;
              if (live) {
                throw new TicketInFlightException(id, owner, dialect.readInstant(rs, 4));
              }
            }
          }
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE "
                      + table
                      + " SET status = 3, version = version + 1, lease_owner = NULL,"
                      + " next_retry_at = "
                      + dialect.now()
                      + ", updated_at = "
                      + dialect.now()
                      + " WHERE id = ? AND status IN (0, 2)")) {
            ps.setLong(1, id);
            ps.executeUpdate();
          }
          audit(c, id, bizType, "CANCEL", operator, reason);
          return true;
        },
        "cancelling ticket " + id);
  }

  /**
   * Requeues the DEAD tickets among {@code ids}; returns how many moved. Works through the ids in
   * transactions of at most {@value #OPERATOR_CHUNK}, so no statement comes near the bind-parameter
   * limits (65,535 on PostgreSQL and MySQL) however many ids are given. A requeued ticket's age,
   * which {@code maxAge} limits, counts from the requeue ({@code requeued_at}).
   */
  public int requeueDead(Collection<Long> ids, String operator, String reason) {
    List<Long> all = new ArrayList<>(ids);
    int moved = 0;
    for (int i = 0; i < all.size(); i += OPERATOR_CHUNK) {
      List<Long> chunk = all.subList(i, Math.min(all.size(), i + OPERATOR_CHUNK));
      moved +=
          inTransaction(c -> requeueChunk(c, chunk, operator, reason), "requeueing dead tickets");
    }
    return moved;
  }

  private int requeueChunk(Connection c, List<Long> ids, String operator, String reason)
      throws SQLException {
    Map<Long, String> dead = new TreeMap<>();
    String select =
        "SELECT id, biz_type FROM "
            + table
            + " WHERE "
            + idIn(ids.size())
            + " AND status = 2 FOR UPDATE";
    try (PreparedStatement ps = c.prepareStatement(select)) {
      bindIds(c, ps, 1, ids);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          dead.put(rs.getLong(1), rs.getString(2));
        }
      }
    }
    if (dead.isEmpty()) {
      return 0;
    }
    String update =
        "UPDATE "
            + table
            + " SET status = 0, attempts = 0, version = version + 1,"
            + " next_retry_at = "
            + dialect.now()
            + ", requeued_at = "
            + dialect.now()
            + ", lease_owner = NULL, updated_at = "
            + dialect.now()
            + " WHERE "
            + idIn(dead.size())
            + " AND status = 2";
    try (PreparedStatement ps = c.prepareStatement(update)) {
      bindIds(c, ps, 1, dead.keySet());
      ps.executeUpdate();
    }
    // one audit row per ticket, written by one statement rather than one round trip each
    String audit =
        "INSERT INTO "
            + auditTable
            + " (ticket_id, biz_type, action, operator, reason, at) SELECT id, biz_type,"
            + " 'REQUEUE', ?, ?, "
            + dialect.now()
            + " FROM "
            + table
            + " WHERE "
            + idIn(dead.size());
    try (PreparedStatement ps = c.prepareStatement(audit)) {
      ps.setString(1, operator);
      ps.setString(2, reason);
      bindIds(c, ps, 3, dead.keySet());
      ps.executeUpdate();
    }
    return dead.size();
  }

  /**
   * {@code id IN (?, ...)}, or on PostgreSQL {@code id = ANY(?)} with one array: a list of bound
   * parameters gets a generic plan that, on a table without fresh statistics, scans the whole table
   * and compares every row with every id; an array keeps it on the primary key.
   */
  private String idIn(int n) {
    return dialect instanceof PostgresDialect
        ? "id = ANY(?)"
        : "id IN (" + LockingSelectDialect.placeholders(n) + ")";
  }

  private void bindIds(Connection c, PreparedStatement ps, int first, Collection<Long> ids)
      throws SQLException {
    if (dialect instanceof PostgresDialect) {
      ps.setArray(first, c.createArrayOf("int8", ids.toArray()));
      return;
    }
    int p = first;
    for (Long id : ids) {
      ps.setLong(p++, id);
    }
  }

  /** Ids of DEAD tickets of a type, oldest first. */
  public List<Long> deadIds(String bizType, int limit) {
    String sql = "SELECT id FROM " + table + " WHERE biz_type = ? AND status = 2 ORDER BY id";
    List<Long> ids = new ArrayList<>();
    try (Connection c = autocommitConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, bizType);
      ps.setMaxRows(limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
      return ids;
    } catch (SQLException e) {
      throw new StoreException("listing dead tickets failed", e);
    }
  }

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
            + table
            + " GROUP BY biz_type, status";
    Map<String, long[]> counts = new TreeMap<>();
    Map<String, Duration[]> ages = new TreeMap<>();
    try (Connection c = autocommitConnection();
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
        if (status == MessageStatus.PENDING.code()) {
          k[0] = n;
          k[1] = rs.getLong(4);
          k[2] = rs.getLong(5);
          a[0] = age(dbNow, dialect.readInstant(rs, 6));
        } else if (status == MessageStatus.DEAD.code()) {
          k[3] = n;
          a[1] = age(dbNow, dialect.readInstant(rs, 7));
        } else if (status == MessageStatus.CANCELED.code()) {
          k[4] = n;
        } else if (status == MessageStatus.SUCCEEDED.code()) {
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

  public List<TicketView> listDead(String bizType, long afterId, int limit) {
    String sql =
        "SELECT "
            + COLUMNS_VIEW
            + " FROM "
            + table
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

  public Optional<TicketView> get(long id) {
    return views(
            "SELECT " + COLUMNS_VIEW + " FROM " + table + " WHERE id = ?",
            1,
            ps -> ps.setLong(1, id))
        .stream()
        .findFirst();
  }

  public Optional<byte[]> payload(long id) {
    try (Connection c = autocommitConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT payload FROM " + table + " WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        byte[] p = rs.getBytes(1);
        return Optional.of(p == null ? new byte[0] : p);
      }
    } catch (SQLException e) {
      throw new StoreException("reading payload of ticket " + id + " failed", e);
    }
  }

  public List<TicketView> findByAggregate(String aggregateId, int limit) {
    return views(
        "SELECT " + COLUMNS_VIEW + " FROM " + table + " WHERE aggregate_id = ? ORDER BY id",
        limit,
        ps -> ps.setString(1, aggregateId));
  }

  /**
   * The tickets with this idempotency key, of any type. Served by the unique index {@code
   * (biz_type, idem_key)}: the types present are found by one index probe each, then one statement
   * probes the index for the key under each of them, so a search never scans the table (no extra
   * index on {@code idem_key} either, which every save would pay for).
   */
  public List<TicketView> findByIdemKey(String idemKey) {
    List<String> types = new ArrayList<>();
    for (String type = nextBizType(null); type != null; type = nextBizType(type)) {
      types.add(type);
    }
    List<TicketView> out = new ArrayList<>();
    for (int i = 0; i < types.size(); i += OPERATOR_CHUNK) {
      List<String> chunk = types.subList(i, Math.min(types.size(), i + OPERATOR_CHUNK));
      out.addAll(
          views(
              findByIdemKeySql(table, chunk.size()),
              1000,
              ps -> {
                int p = 1;
                for (String t : chunk) {
                  ps.setString(p++, t);
                }
                ps.setString(p, idemKey);
              }));
    }
    out.sort(java.util.Comparator.comparingLong(TicketView::id));
    return out.size() > 1000 ? out.subList(0, 1000) : out;
  }

  /** The statement of {@link #findByIdemKey} for {@code types} biz types (a plan test reads it). */
  static String findByIdemKeySql(String table, int types) {
    return "SELECT "
        + COLUMNS_VIEW
        + " FROM "
        + table
        + " WHERE biz_type IN ("
        + LockingSelectDialect.placeholders(types)
        + ") AND idem_key = ? ORDER BY id";
  }

  public List<AuditEntry> audit(long ticketId) {
    String sql =
        "SELECT id, ticket_id, biz_type, action, operator, reason, at FROM "
            + auditTable
            + " WHERE ticket_id = ? ORDER BY id";
    List<AuditEntry> out = new ArrayList<>();
    try (Connection c = autocommitConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, ticketId);
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
      throw new StoreException("reading the audit trail of ticket " + ticketId + " failed", e);
    }
  }

  /**
   * Deletes terminal tickets of {@code status} last updated more than {@code olderThan} ago, of
   * {@code bizType} or, when it is null, of every type present (one type after the other), in
   * statements of at most {@code batchSize} rows, each its own short transaction at READ COMMITTED.
   * Every statement is served by the due index {@code (biz_type, status, next_retry_at)}: every
   * terminal transition sets {@code next_retry_at} to its own time, so the range {@code
   * next_retry_at < cutoff} holds every candidate and {@code updated_at} decides. Without a type
   * the types are found by one index probe each, never by a table scan, and no statement takes gap
   * locks that the claims of PENDING tickets would wait for.
   */
  public int purge(MessageStatus status, String bizType, Duration olderThan, int batchSize) {
    if (bizType != null) {
      return purgeType(status, bizType, olderThan, batchSize);
    }
    int total = 0;
    for (String type = nextBizType(null); type != null; type = nextBizType(type)) {
      total += purgeType(status, type, olderThan, batchSize);
    }
    return total;
  }

  private int purgeType(MessageStatus status, String bizType, Duration olderThan, int batchSize) {
    String cutoff = dialect.plusMillis(dialect.now());
    String condition =
        "biz_type = ? AND status = ? AND next_retry_at < " + cutoff + " AND updated_at < " + cutoff;
    return deleteInBatches(
        dialect.deleteBatchSql(table, "id", condition),
        batchSize,
        ps -> {
          ps.setString(1, bizType);
          ps.setInt(2, status.code());
          ps.setLong(3, -olderThan.toMillis());
          ps.setLong(4, -olderThan.toMillis());
        },
        "purging " + status + " tickets of " + bizType);
  }

  /** The smallest biz type above {@code after} (null: the smallest), by one index probe. */
  private String nextBizType(String after) {
    String sql =
        "SELECT MIN(biz_type) FROM " + table + (after == null ? "" : " WHERE biz_type > ?");
    try (Connection c = autocommitConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      if (after != null) {
        ps.setString(1, after);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    } catch (SQLException e) {
      throw new StoreException("listing biz types failed: " + e.getMessage(), e);
    }
  }

  public int purgeInbox(Duration olderThan, int batchSize) {
    String condition = "received_at < " + dialect.plusMillis(dialect.now());
    return deleteInBatches(
        dialect.deleteBatchSql(inboxTable, "consumer, message_id", condition),
        batchSize,
        ps -> ps.setLong(1, -olderThan.toMillis()),
        "purging the inbox");
  }

  private int deleteInBatches(String sql, int batchSize, Binder binder, String what) {
    int total = 0;
    try (Connection c = autocommitConnection()) {
      // InnoDB's REPEATABLE READ would take gap locks around every range the delete scans
      int isolation = c.getTransactionIsolation();
      if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      }
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        int limitIndex = (int) sql.chars().filter(ch -> ch == '?').count();
        while (true) {
          binder.bind(ps);
          ps.setInt(limitIndex, batchSize);
          int n = ps.executeUpdate();
          total += n;
          if (n < batchSize) {
            return total;
          }
        }
      } finally {
        if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
          c.setTransactionIsolation(isolation);
        }
      }
    } catch (SQLException e) {
      throw new StoreException(what + " failed: " + e.getMessage(), e);
    }
  }

  // ---------------------------------------------------------------- helpers

  private void audit(
      Connection c, Long ticketId, String bizType, String action, String operator, String reason)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(auditSql())) {
      bindAudit(ps, ticketId, bizType, action, operator, reason);
      ps.executeUpdate();
    }
  }

  private String auditSql() {
    return "INSERT INTO "
        + auditTable
        + " (ticket_id, biz_type, action, operator, reason, at) VALUES (?, ?, ?, ?, ?, "
        + dialect.now()
        + ")";
  }

  private static void bindAudit(
      PreparedStatement ps,
      Long ticketId,
      String bizType,
      String action,
      String operator,
      String reason)
      throws SQLException {
    if (ticketId == null) {
      ps.setNull(1, java.sql.Types.BIGINT);
    } else {
      ps.setLong(1, ticketId);
    }
    ps.setString(2, bizType);
    ps.setString(3, action);
    ps.setString(4, operator);
    ps.setString(5, reason);
  }

  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  private interface TxWork<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs {@code work} in one short transaction. A deadlock or serialization failure (SQLState
   * 40001, or MySQL's 1213) is retried up to twice: operator actions lock a ticket row while
   * workers claim and sweep around it, and InnoDB may pick the operator as the victim.
   */
  private <T> T inTransaction(TxWork<T> work, String what) {
    for (int attempt = 1; ; attempt++) {
      try (Connection c = dataSource.getConnection()) {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
          T result = work.run(c);
          c.commit();
          return result;
        } catch (SQLException | RuntimeException e) {
          try {
            c.rollback();
          } catch (SQLException rollbackFailed) {
            // a broken connection: report what broke it, not the failed rollback
            e.addSuppressed(rollbackFailed);
          }
          throw e;
        } finally {
          restoreAutoCommit(c, auto);
        }
      } catch (SQLException e) {
        boolean retryable = "40001".equals(e.getSQLState()) || e.getErrorCode() == 1213;
        if (!retryable || attempt >= 3) {
          throw new StoreException(what + " failed: " + e.getMessage(), e);
        }
      }
    }
  }

  private static void restoreAutoCommit(Connection c, boolean auto) {
    try {
      c.setAutoCommit(auto);
    } catch (SQLException e) {
      // the pool discards a broken connection on close
    }
  }

  private List<TicketView> views(String sql, int limit, Binder binder) {
    List<TicketView> out = new ArrayList<>();
    try (Connection c = autocommitConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      ps.setMaxRows(limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new TicketView(
                  rs.getLong(1),
                  MessageKind.ofCode(rs.getInt(2)),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getString(5),
                  rs.getString(6),
                  rs.getInt(7),
                  HeadersCodec.decodeForView(rs.getString(8)),
                  MessageStatus.ofCode(rs.getInt(9)),
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
      throw new StoreException("reading tickets failed", e);
    }
  }

  /** A pooled connection in autocommit mode (pools hand them out so; we make sure). */
  private Connection autocommitConnection() throws SQLException {
    Connection c = dataSource.getConnection();
    try {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      return c;
    } catch (SQLException e) {
      c.close();
      throw e;
    }
  }
}
