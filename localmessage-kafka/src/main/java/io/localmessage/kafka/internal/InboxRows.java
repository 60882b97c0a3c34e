package io.localmessage.kafka.internal;

import io.localmessage.inbox.Inbox;
import io.localmessage.spi.Dialect;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Records the inbox rows of many records at once, in the caller's transaction, and says which ids
 * were new. One statement for a chunk of ids instead of one per record:
 *
 * <ul>
 *   <li>PostgreSQL: {@code INSERT ... SELECT unnest(?) ... ON CONFLICT DO NOTHING RETURNING
 *       message_id}: the returned ids are the new ones; a duplicate never aborts the transaction.
 *   <li>MySQL/MariaDB and H2: one multi-row {@code INSERT}. When any id exists, the database undoes
 *       only that statement (InnoDB and H2 roll back the failed statement, not the transaction) and
 *       the chunk is recorded id by id through {@link Inbox#tryRecord}, which tells each duplicate.
 *   <li>Any other dialect: id by id through {@link Inbox#tryRecord}.
 * </ul>
 *
 * <p>Ids are inserted in sorted order, so two transactions recording overlapping ids lock them in
 * the same order and cannot deadlock each other on the inbox. Not API.
 */
public final class InboxRows {
  private static final int MYSQL_DUPLICATE_KEY = 1062;
  private static final String UNIQUE_VIOLATION = "23505";

  private enum Kind {
    POSTGRESQL,
    MULTI_ROW,
    ONE_BY_ONE
  }

  private final Inbox inbox;
  private final String table;
  private final String consumer;
  private final Kind kind;
  private final String now;
  private final Dialect dialect;

  public InboxRows(Inbox inbox, Dialect dialect, String table, String consumer) {
    this.inbox = inbox;
    this.dialect = dialect;
    this.table = table;
    this.consumer = consumer;
    this.now = dialect.now();
    this.kind =
        switch (dialect.name()) {
          case "postgresql" -> Kind.POSTGRESQL;
          case "mysql", "h2" -> Kind.MULTI_ROW;
          default -> Kind.ONE_BY_ONE;
        };
  }

  /** The dialect of the inbox's database. */
  public Dialect dialect() {
    return dialect;
  }

  /**
   * Records {@code ids} (distinct, each a valid inbox id) through {@code c}, which is in a
   * transaction; returns the ids that were new. Throws when the database fails: the caller rolls
   * back.
   */
  public Set<String> recordNew(Connection c, List<String> ids) throws SQLException {
    if (ids.isEmpty()) {
      return Set.of();
    }
    List<String> sorted = new ArrayList<>(new TreeSet<>(ids));
    return switch (kind) {
      case POSTGRESQL -> postgres(c, sorted);
      case MULTI_ROW -> multiRow(c, sorted);
      case ONE_BY_ONE -> oneByOne(c, sorted);
    };
  }

  private Set<String> postgres(Connection c, List<String> ids) throws SQLException {
    String sql =
        "INSERT INTO "
            + table
            + " (consumer, message_id, received_at) SELECT ?, u.id, "
            + now
            + " FROM unnest(?::varchar[]) WITH ORDINALITY AS u(id, n) ORDER BY u.n"
            + " ON CONFLICT (consumer, message_id) DO NOTHING RETURNING message_id";
    Set<String> fresh = new HashSet<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      Array array = c.createArrayOf("varchar", ids.toArray());
      try {
        ps.setString(1, consumer);
        ps.setArray(2, array);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            fresh.add(rs.getString(1));
          }
        }
      } finally {
        array.free();
      }
    }
    return fresh;
  }

  private Set<String> multiRow(Connection c, List<String> ids) throws SQLException {
    StringBuilder sql =
        new StringBuilder("INSERT INTO ")
            .append(table)
            .append(" (consumer, message_id, received_at) VALUES ");
    for (int i = 0; i < ids.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append("(?, ?, ").append(now).append(')');
    }
    try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
      int p = 1;
      for (String id : ids) {
        ps.setString(p++, consumer);
        ps.setString(p++, id);
      }
      ps.executeUpdate();
      return new HashSet<>(ids);
    } catch (SQLException e) {
      if (e.getErrorCode() != MYSQL_DUPLICATE_KEY && !UNIQUE_VIOLATION.equals(e.getSQLState())) {
        throw e;
      }
      // some id was applied before (a redelivery): only the statement was undone
      return oneByOne(c, ids);
    }
  }

  private Set<String> oneByOne(Connection c, List<String> ids) {
    Set<String> fresh = new HashSet<>();
    for (String id : ids) {
      if (inbox.tryRecord(c, consumer, id)) {
        fresh.add(id);
      }
    }
    return fresh;
  }
}
