package io.localmessage.internal.dialect;

import io.localmessage.spi.MessageRow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.OptionalLong;

/**
 * MySQL 8 and MariaDB 10.6+. Times are {@code DATETIME(3)} holding UTC, written and compared only
 * with {@code UTC_TIMESTAMP(3)}, so the session time zone never matters. Insert-if-absent is {@code
 * INSERT ... ON DUPLICATE KEY UPDATE id = id}, not {@code INSERT IGNORE} (which would also turn
 * truncation and other errors into warnings); a duplicate is recognised by the absence of a
 * generated key, which works whether or not the driver reports found rows.
 */
final class MySqlDialect extends LockingSelectDialect {
  private static final int DUPLICATE_KEY = 1062;

  @Override
  public String name() {
    return "mysql";
  }

  /** Next transaction only: the pool's connection keeps its own isolation level afterwards. */
  @Override
  protected void beginShortTransaction(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    }
  }

  /**
   * A named lock of the server ({@code GET_LOCK}, held by the session), named by a hash of the
   * table (lock names are limited to 64 characters); waits up to 2 minutes for another replica's
   * schema changes.
   */
  @Override
  public void lockSchema(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, 120)")) {
      ps.setString(1, schemaLockName(table));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || rs.getInt(1) != 1) {
          throw new SQLException(
              "another replica held the schema lock of " + table + " for 2 minutes");
        }
      }
    }
  }

  @Override
  public void unlockSchema(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT RELEASE_LOCK(?)")) {
      ps.setString(1, schemaLockName(table));
      ps.executeQuery().close();
    }
  }

  @Override
  public OptionalLong maxStatementBytes(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT @@max_allowed_packet")) {
      return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
    }
  }

  private static String schemaLockName(String table) {
    return "localmessage_schema_" + Long.toHexString(AggregateLockKey.of(table, "", "schema"));
  }

  @Override
  public String now() {
    return "UTC_TIMESTAMP(3)";
  }

  @Override
  public String plusMillis(String base) {
    return "(" + base + " + INTERVAL (? * 1000) MICROSECOND)";
  }

  @Override
  public Instant readInstant(ResultSet rs, int column) throws SQLException {
    LocalDateTime t = rs.getObject(column, LocalDateTime.class);
    return t == null ? null : t.toInstant(ZoneOffset.UTC);
  }

  @Override
  public OptionalLong insertIfAbsent(Connection c, String table, MessageRow row)
      throws SQLException {
    String sql = Columns.insert(this, table) + " ON DUPLICATE KEY UPDATE id = id";
    try (PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
      Columns.bindInsert(ps, row);
      ps.executeUpdate();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        if (keys.next()) {
          long id = keys.getLong(1);
          return id > 0 ? OptionalLong.of(id) : OptionalLong.empty();
        }
        return OptionalLong.empty();
      }
    }
  }

  /**
   * A locking read: InnoDB's REPEATABLE READ snapshot of a transaction that read anything before
   * cannot see a duplicate committed since, but a locking read sees the latest committed row. The
   * insert that found the duplicate already holds a lock on that row, so this one adds no waiting.
   */
  @Override
  public OptionalLong existingId(Connection c, String table, String bizType, String idemKey)
      throws SQLException {
    return firstId(
        c,
        "SELECT id FROM " + table + " WHERE biz_type = ? AND idem_key = ? LOCK IN SHARE MODE",
        bizType,
        idemKey);
  }

  /**
   * One statement that creates the aggregate's lock row or, when it exists, locks it: InnoDB takes
   * an exclusive lock on the duplicate row of an {@code INSERT ... ON DUPLICATE KEY UPDATE} (and
   * waits for a transaction that holds it or inserted it and has not committed), and an update that
   * changes nothing writes nothing. A locking read first would be wrong under REPEATABLE READ: on a
   * missing row it takes a gap lock, and two first saves of one aggregate then deadlock on their
   * inserts.
   */
  @Override
  public void lockAggregateForSave(Connection c, String table, String bizType, String aggregateId)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + table
                + "_lock (biz_type, aggregate_id, created_at) VALUES (?, ?, "
                + now()
                + ") ON DUPLICATE KEY UPDATE biz_type = biz_type")) {
      ps.setString(1, bizType);
      ps.setString(2, aggregateId);
      ps.executeUpdate();
    }
  }

  @Override
  public boolean insertInboxIfAbsent(Connection c, String inbox, String consumer, String id)
      throws SQLException {
    // no generated key to tell a duplicate by: a plain insert whose duplicate-key error (1062) is
    // caught. InnoDB rolls back only the failed statement, and a concurrent insert of the same key
    // waits for the first transaction instead of deadlocking (a read-then-insert would).
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + inbox
                + " (consumer, message_id, received_at) VALUES (?, ?, "
                + now()
                + ")")) {
      ps.setString(1, consumer);
      ps.setString(2, id);
      ps.executeUpdate();
      return true;
    } catch (SQLException e) {
      if (e.getErrorCode() == DUPLICATE_KEY) {
        return false;
      }
      throw e;
    }
  }

  @Override
  public String deleteBatchSql(String table, String keyColumns, String condition) {
    return "DELETE FROM " + table + " WHERE " + condition + " LIMIT ?";
  }
}
