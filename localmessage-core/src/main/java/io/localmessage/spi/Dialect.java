package io.localmessage.spi;

import io.localmessage.MessageStatus;
import io.localmessage.internal.dialect.Codes;
import io.localmessage.internal.store.SqlErrors;
import io.localmessage.internal.store.Transactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;

/**
 * What differs between databases: time expressions on the database clock, insert-if-absent, the
 * claim statement(s) and batched, version-checked write-backs. One subclass per database; the
 * library builds every other statement from {@link #now()} and {@link #plusMillis(String)}.
 * PostgreSQL, MySQL/MariaDB and H2 are built in ({@link Dialects}); implement one only for another
 * database, and pass it to {@code LocalMessagesBuilder.dialect}.
 *
 * <p>All time arithmetic happens in SQL on the database clock, so replicas with skewed clocks or
 * different session time zones agree on every due time and lease; a dialect never binds a timestamp
 * taken from the JVM. Statuses cross this interface as {@link MessageStatus}; the values stored in
 * the {@code status} column are 0 PENDING, 1 SUCCEEDED, 2 DEAD, 3 CANCELED.
 */
public abstract class Dialect {

  /** For subclasses. */
  protected Dialect() {}

  /** Short lower-case name, also the folder of the schema resource: {@code postgresql}. */
  public abstract String name();

  /** The classpath resource with the DDL for this database. */
  public String schemaResource() {
    return "db/localmessage/" + name() + "/V1__localmessage.sql";
  }

  /** SQL expression for "now" on the database clock, comparable with the stored times. */
  public abstract String now();

  /** SQL expression: {@code base} plus a bound number of milliseconds (one {@code ?}). */
  public abstract String plusMillis(String base);

  /** Reads a stored time column as an instant. */
  public abstract Instant readInstant(ResultSet rs, int column) throws SQLException;

  /**
   * Inserts a message unless {@code (biz_type, idem_key)} exists, in the caller's transaction,
   * without poisoning it on a duplicate. Returns the new id, or empty for a duplicate.
   */
  public abstract OptionalLong insertIfAbsent(Connection c, String table, MessageRow row)
      throws SQLException;

  /**
   * The id of the message with key {@code (bizType, idemKey)}, if any: asked in the caller's
   * transaction right after {@link #insertIfAbsent} reported a duplicate, so it must see the latest
   * committed row even when the transaction's snapshot is older (the default reads plainly, which
   * does at READ COMMITTED).
   */
  public OptionalLong existingId(Connection c, String table, String bizType, String idemKey)
      throws SQLException {
    return firstId(
        c, "SELECT id FROM " + table + " WHERE biz_type = ? AND idem_key = ?", bizType, idemKey);
  }

  // ------------------------------------------------------------------ ordered saves (design 8.19)

  /**
   * Before a message of an ordered biz type is inserted: takes a lock on {@code (bizType,
   * aggregateId)} that the caller's transaction holds until it commits or rolls back, so a second
   * transaction saving to the same aggregate waits for the first to end and its message gets a
   * later id than every message of the first. An aggregate's order is then the order its saves
   * committed in, and a successor never becomes visible while an older message of its aggregate is
   * still uncommitted. Called with the caller's connection inside its transaction, never for
   * unordered types; a batch locks its aggregates in ascending order, so two batches cannot
   * deadlock on them. Taking the same lock twice in one transaction must not wait.
   *
   * <p>The default keeps one row per aggregate in {@code table + "_lock"} (created by schema step
   * V4): a locking read of the row, and an insert when it is missing (a failed insert is retried as
   * a locking read). That fits a database whose failed statement leaves the transaction usable and
   * whose locking read of a missing row takes no gap lock (H2). PostgreSQL uses a
   * transaction-scoped advisory lock instead, MySQL/MariaDB one insert-or-lock statement.
   */
  public void lockAggregateForSave(Connection c, String table, String bizType, String aggregateId)
      throws SQLException {
    String lockTable = table + "_lock";
    for (int attempt = 1; ; attempt++) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT 1 FROM "
                  + lockTable
                  + " WHERE biz_type = ? AND aggregate_id = ? FOR UPDATE")) {
        ps.setString(1, bizType);
        ps.setString(2, aggregateId);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO "
                  + lockTable
                  + " (biz_type, aggregate_id, created_at) VALUES (?, ?, "
                  + now()
                  + ")")) {
        ps.setString(1, bizType);
        ps.setString(2, aggregateId);
        ps.executeUpdate();
        return;
      } catch (SQLException e) {
        // another transaction created the row first: lock it with the next locking read
        if (attempt >= 3 || e.getSQLState() == null || !e.getSQLState().startsWith("23")) {
          throw e;
        }
      }
    }
  }

  /** Runs {@code sql} (binding the biz type and key) and returns the first id, if any. */
  protected static OptionalLong firstId(Connection c, String sql, String bizType, String idemKey)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, bizType);
      ps.setString(2, idemKey);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
      }
    }
  }

  /** The value stored in the {@code status} column for {@code status}. */
  protected static int statusCode(MessageStatus status) {
    return Codes.of(status);
  }

  /**
   * Records {@code (consumer, messageId)} in the inbox unless present, in the caller's transaction,
   * without poisoning it on a duplicate. Returns false for a duplicate.
   */
  public abstract boolean insertInboxIfAbsent(
      Connection c, String inboxTable, String consumer, String messageId) throws SQLException;

  /**
   * Claims due messages: bumps {@code attempts} and {@code version}, sets the lease end and owner.
   * {@code c} arrives in autocommit mode; a dialect that needs several statements opens and commits
   * its own short transaction and restores autocommit.
   */
  public abstract List<ClaimedRow> claim(Connection c, String table, ClaimRequest request)
      throws SQLException;

  /**
   * Deletes the messages whose {@code (id, version)} still match and that are still PENDING (the
   * success write-back). Returns how many rows matched. {@code c} is in autocommit mode.
   */
  public abstract int deleteIfCurrent(Connection c, String table, long[] ids, long[] versions)
      throws SQLException;

  /**
   * Applies version-checked transitions. Returns how many rows matched. {@code c} is in autocommit
   * mode. The default runs one JDBC batch in one transaction.
   */
  public int updateIfCurrent(Connection c, String table, List<Transition> transitions)
      throws SQLException {
    String sql =
        "UPDATE "
            + table
            + " SET status = ?, attempts = attempts + ?, version = version + 1, next_retry_at ="
            + " CASE WHEN ? = 1 THEN next_retry_at ELSE "
            + plusMillis(now())
            + " END, last_error = COALESCE(?, last_error),"
            + " lease_owner = CASE WHEN ? = 1 THEN lease_owner ELSE NULL END, updated_at = "
            + now()
            + " WHERE id = ? AND version = ? AND status = 0";
    // rows in id order: two write-backs lock them in the same order and cannot deadlock
    List<Transition> sorted = new java.util.ArrayList<>(transitions);
    sorted.sort(java.util.Comparator.comparingLong(Transition::id));
    beginShortTransaction(c);
    return Transactions.shortTransaction(
        c,
        tx -> {
          try (PreparedStatement ps = tx.prepareStatement(sql)) {
            for (Transition t : sorted) {
              ps.setInt(1, statusCode(t.status()));
              ps.setInt(2, t.attemptsDelta());
              ps.setInt(3, t.keepLease() ? 1 : 0);
              ps.setLong(4, t.status() == MessageStatus.PENDING ? t.delayMillis() : 0L);
              ps.setString(5, t.lastError());
              ps.setInt(6, t.keepLease() ? 1 : 0);
              ps.setLong(7, t.id());
              ps.setLong(8, t.version());
              ps.addBatch();
            }
            return sumCounts(ps.executeBatch());
          }
        });
  }

  /**
   * Extends the leases of claimed messages to {@code now + leaseMillis} (database clock) where
   * {@code (id, version)} still match and the message is still PENDING; the version is not bumped,
   * so the execution's write-back stays valid. Returns the ids that matched: a message missing from
   * it was cancelled or taken over, and its execution must not write an outcome. {@code c} is in
   * autocommit mode. The default locks the rows in one short transaction, compares versions, then
   * updates the ones that still match.
   */
  public java.util.Set<Long> renewLeases(
      Connection c, String table, long[] ids, long[] versions, long leaseMillis)
      throws SQLException {
    java.util.Map<Long, Long> wanted = new java.util.TreeMap<>();
    for (int i = 0; i < ids.length; i++) {
      wanted.put(ids[i], versions[i]);
    }
    java.util.Set<Long> matched = new java.util.TreeSet<>();
    if (wanted.isEmpty()) {
      return matched;
    }
    beginShortTransaction(c);
    return Transactions.shortTransaction(
        c,
        tx -> {
          String in = String.join(", ", java.util.Collections.nCopies(wanted.size(), "?"));
          try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT id, version FROM "
                      + table
                      + " WHERE id IN ("
                      + in
                      + ") AND status = 0 ORDER BY id FOR UPDATE")) {
            int p = 1;
            for (Long id : wanted.keySet()) {
              ps.setLong(p++, id);
            }
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                long id = rs.getLong(1);
                if (wanted.get(id) == rs.getLong(2)) {
                  matched.add(id);
                }
              }
            }
          }
          if (!matched.isEmpty()) {
            String ok = String.join(", ", java.util.Collections.nCopies(matched.size(), "?"));
            try (PreparedStatement ps =
                c.prepareStatement(
                    "UPDATE "
                        + table
                        + " SET next_retry_at = "
                        + plusMillis(now())
                        + " WHERE id IN ("
                        + ok
                        + ") AND status = 0")) {
              int p = 1;
              ps.setLong(p++, leaseMillis);
              for (Long id : matched) {
                ps.setLong(p++, id);
              }
              ps.executeUpdate();
            }
          }
          return matched;
        });
  }

  /**
   * The largest statement the server accepts, in bytes, when it has such a limit (MySQL/MariaDB's
   * {@code max_allowed_packet}, past which it refuses the statement and closes the connection);
   * empty when it has none worth checking. The default: none.
   */
  public java.util.OptionalLong maxStatementBytes(Connection c) throws SQLException {
    return java.util.OptionalLong.empty();
  }

  /**
   * Takes the lock under which the schema of the tables named after {@code table} is created or
   * brought up to date, on the autocommit connection {@code c}, waiting for another replica that
   * holds it: replicas starting together each find the schema missing, and their DDL must not run
   * side by side (the database refuses a second {@code ALTER TABLE ... ADD} or races in its
   * catalog). Released by {@link #unlockSchema}. The default takes none (a dialect that cannot).
   */
  public void lockSchema(Connection c, String table) throws SQLException {}

  /** Releases the lock of {@link #lockSchema}; the default holds none. */
  public void unlockSchema(Connection c, String table) throws SQLException {}

  /**
   * A statement deleting at most {@code ?} rows (the last parameter) of {@code table} that match
   * {@code condition}; {@code keyColumns} is the table's primary key, e.g. {@code id}. A row is
   * deleted only if it matches {@code condition} when the statement holds its lock: a row another
   * session changed meanwhile (a DEAD message requeued while the purge waited) is checked again,
   * never deleted by an answer read before the wait.
   */
  public abstract String deleteBatchSql(String table, String keyColumns, String condition);

  /**
   * Called on an autocommit connection right before the library opens one of its own short
   * transactions (claim, write-back). MySQL/MariaDB use it to run that one transaction at READ
   * COMMITTED: under REPEATABLE READ the claim's range scan takes gap locks that the write-backs of
   * other replicas then deadlock against.
   */
  protected void beginShortTransaction(Connection c) throws SQLException {}

  // ------------------------------------------------------------ the transaction boundary

  /**
   * Whether the database will not commit a transaction after {@code error} was raised inside it,
   * even if the caller caught it and went on: then the library rolls back and reports {@code
   * TransactionAbortedException} instead of a commit. The default: a deadlock or serialization
   * failure (SQLSTATE class 40, MySQL/MariaDB code 1213), which rolls the whole transaction back on
   * every database; other errors undo only their own statement. PostgreSQL answers true for every
   * error: it aborts the transaction at any error until a rollback to a savepoint.
   */
  public boolean errorAbortsTransaction(SQLException error) {
    return SqlErrors.rolledBack(error);
  }

  /**
   * Whether the transaction open on {@code c} is marked failed by the database, as far as the
   * driver can tell without a round trip; false when it cannot tell. Checked before the library
   * commits a transaction it opened around caller work, in addition to the errors it saw.
   */
  public boolean transactionFailed(Connection c) throws SQLException {
    return false;
  }

  /** Adds up JDBC batch counts; an unknown count is taken as one matched row. */
  protected static int sumCounts(int[] counts) {
    int n = 0;
    for (int count : counts) {
      n += count == java.sql.Statement.SUCCESS_NO_INFO ? 1 : Math.max(count, 0);
    }
    return n;
  }
}
