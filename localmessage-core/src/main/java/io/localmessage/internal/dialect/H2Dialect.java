package io.localmessage.internal.dialect;

import io.localmessage.spi.MessageRow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.OptionalLong;

/**
 * H2 2.x, in-process (tests, demos, single-node tools). Insert-if-absent is a plain insert whose
 * unique-key violation (SQLState 23505) is caught: H2 undoes only the failed statement, so the
 * caller's transaction stays usable.
 */
final class H2Dialect extends LockingSelectDialect {
  // H2 has no lock a session can name: its databases live in one JVM (embedded or in-memory), so
  // the schema lock is this JVM's, one per table name
  private static final java.util.concurrent.ConcurrentHashMap<
          String, java.util.concurrent.locks.ReentrantLock>
      SCHEMA_LOCKS = new java.util.concurrent.ConcurrentHashMap<>();

  @Override
  public void lockSchema(Connection c, String table) {
    SCHEMA_LOCKS
        .computeIfAbsent(
            table.toLowerCase(java.util.Locale.ROOT),
            t -> new java.util.concurrent.locks.ReentrantLock())
        .lock();
  }

  @Override
  public void unlockSchema(Connection c, String table) {
    java.util.concurrent.locks.ReentrantLock lock =
        SCHEMA_LOCKS.get(table.toLowerCase(java.util.Locale.ROOT));
    if (lock != null && lock.isHeldByCurrentThread()) {
      lock.unlock();
    }
  }

  private static final String UNIQUE_VIOLATION = "23505";

  @Override
  public String name() {
    return "h2";
  }

  @Override
  public String now() {
    return "CURRENT_TIMESTAMP(3)";
  }

  @Override
  public String plusMillis(String base) {
    return "DATEADD(MILLISECOND, CAST(? AS BIGINT), " + base + ")";
  }

  @Override
  public Instant readInstant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  @Override
  public OptionalLong insertIfAbsent(Connection c, String table, MessageRow row)
      throws SQLException {
    String sql = Columns.insert(this, table);
    try (PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
      Columns.bindInsert(ps, row);
      ps.executeUpdate();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        keys.next();
        return OptionalLong.of(keys.getLong(1));
      }
    } catch (SQLException e) {
      if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
        return OptionalLong.empty();
      }
      throw e;
    }
  }

  @Override
  public boolean insertInboxIfAbsent(Connection c, String inbox, String consumer, String id)
      throws SQLException {
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
      if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
        return false;
      }
      throw e;
    }
  }

  @Override
  public String deleteBatchSql(String table, String keyColumns, String condition) {
    // the condition on the row itself, not through a subquery: H2 checks it again on a row that
    // changed while the delete waited for it (a DEAD message requeued meanwhile stays)
    return "DELETE FROM " + table + " WHERE " + condition + " FETCH FIRST ? ROWS ONLY";
  }
}
