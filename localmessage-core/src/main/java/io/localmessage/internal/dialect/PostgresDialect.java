package io.localmessage.internal.dialect;

import io.localmessage.MessageStatus;
import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.MessageRow;
import io.localmessage.spi.Transition;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * PostgreSQL: one statement per claim (a CTE {@code UPDATE ... FROM (SELECT ... FOR UPDATE SKIP
 * LOCKED)} over every type at once through {@code LATERAL}), {@code ON CONFLICT DO NOTHING} for
 * insert-if-absent, and single-statement batched write-backs over {@code unnest} of arrays, each
 * row keeping its own version check.
 */
final class PostgresDialect extends Dialect {

  @Override
  public String name() {
    return "postgresql";
  }

  @Override
  public String now() {
    // statement start, not transaction start: a message saved late in a long transaction is due
    // when it is written, and lease ends are measured from the claim itself
    return "statement_timestamp()";
  }

  @Override
  public String plusMillis(String base) {
    return "(" + base + " + ? * interval '1 millisecond')";
  }

  /** PostgreSQL aborts the transaction at any error, until a rollback to a savepoint. */
  @Override
  public boolean errorAbortsTransaction(SQLException error) {
    return true;
  }

  /** pgjdbc tracks the server's transaction status from every reply: no round trip. */
  @Override
  public boolean transactionFailed(Connection c) throws SQLException {
    return PgTransactionState.failed(c);
  }

  @Override
  public Instant readInstant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  @Override
  public OptionalLong insertIfAbsent(Connection c, String table, MessageRow row)
      throws SQLException {
    String sql =
        Columns.insert(this, table) + " ON CONFLICT (biz_type, idem_key) DO NOTHING RETURNING id";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      Columns.bindInsert(ps, row);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
      }
    }
  }

  /**
   * A transaction-scoped advisory lock on 64 bits of a SHA-256 of table, biz type and aggregate:
   * nothing is written, it is released at commit or rollback, a second save of the aggregate waits
   * for it (bounded by {@code lock_timeout}), and taking it twice in one transaction does not wait.
   * A collision only makes two aggregates wait for each other, never breaks an order.
   */
  @Override
  public void lockAggregateForSave(Connection c, String table, String bizType, String aggregateId)
      throws SQLException {
    long key = AggregateLockKey.of(table, bizType, aggregateId);
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(?, ?)")) {
      ps.setInt(1, (int) (key >>> 32));
      ps.setInt(2, (int) key);
      ps.executeQuery().close();
    }
  }

  /** A session-level advisory lock: DDL runs in autocommit mode, statement after statement. */
  @Override
  public void lockSchema(Connection c, String table) throws SQLException {
    schemaLock(c, "SELECT pg_advisory_lock(?, ?)", table);
  }

  @Override
  public void unlockSchema(Connection c, String table) throws SQLException {
    schemaLock(c, "SELECT pg_advisory_unlock(?, ?)", table);
  }

  private static void schemaLock(Connection c, String sql, String table) throws SQLException {
    // no biz type is empty: this key is never an aggregate's save lock
    long key = AggregateLockKey.of(table, "", "schema");
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, (int) (key >>> 32));
      ps.setInt(2, (int) key);
      ps.executeQuery().close();
    }
  }

  @Override
  public boolean insertInboxIfAbsent(Connection c, String inbox, String consumer, String id)
      throws SQLException {
    String sql =
        "INSERT INTO "
            + inbox
            + " (consumer, message_id, received_at) VALUES (?, ?, "
            + now()
            + ") ON CONFLICT (consumer, message_id) DO NOTHING";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, consumer);
      ps.setString(2, id);
      return ps.executeUpdate() == 1;
    }
  }

  /**
   * One statement for all types: a {@code UNION ALL} of one locking sub-select per type. Each limit
   * is written into the SQL as a literal (an int the engine computed, never user input): with
   * {@code LIMIT $n} or a limit taken from a joined array the planner cannot see how few rows are
   * wanted, estimates thousands, switches to a merge join over the whole primary key and, past
   * {@code jit_above_cost}, spends tens of milliseconds JIT-compiling every claim. The statement
   * texts stay few (one per limit value), so the driver's prepared-statement cache still works.
   */
  @Override
  public List<ClaimedRow> claim(Connection c, String table, ClaimRequest request)
      throws SQLException {
    StringBuilder due = new StringBuilder();
    for (ClaimRequest.TypeLimit type : request.types()) {
      if (due.length() > 0) {
        due.append(" UNION ALL ");
      }
      due.append("SELECT id, prev_owner, ")
          .append(type.maxAttempts())
          .append(" AS cap FROM (SELECT m.id, m.lease_owner AS prev_owner FROM ")
          .append(table)
          .append(" m WHERE ")
          .append(Predicates.due(this, "m"));
      if (request.onlyIds() != null) {
        due.append(" AND m.id = ANY(?)");
      }
      if (type.ordered()) {
        due.append(" AND ").append(Predicates.headOfAggregate(table, "m"));
      }
      due.append(" ORDER BY m.next_retry_at LIMIT ")
          .append(Math.max(0, type.limit()))
          .append(" FOR UPDATE SKIP LOCKED) q");
    }
    String sql =
        "WITH due AS ("
            + due
            + ") UPDATE "
            + table
            + " t SET attempts = t.attempts + 1, version = t.version + 1,"
            + " max_attempts = CASE WHEN t.max_attempts = 0 THEN due.cap ELSE t.max_attempts END,"
            + " next_retry_at = "
            + plusMillis(now())
            + ", lease_owner = ?, updated_at = "
            + now()
            + " FROM due WHERE t.id = due.id RETURNING "
            + Columns.claimed("t")
            + ", "
            + now()
            + ", due.prev_owner";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int p = 1;
      Array ids =
          request.onlyIds() == null ? null : c.createArrayOf("int8", request.onlyIds().toArray());
      for (ClaimRequest.TypeLimit type : request.types()) {
        ps.setString(p++, type.bizType());
        if (ids != null) {
          ps.setArray(p++, ids);
        }
      }
      ps.setLong(p++, request.leaseMillis());
      ps.setString(p, request.owner());
      List<ClaimedRow> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(Columns.mapClaimed(this, rs, 0));
        }
      }
      return rows;
    }
  }

  @Override
  public int deleteIfCurrent(Connection c, String table, long[] ids, long[] versions)
      throws SQLException {
    String sql =
        "DELETE FROM "
            + table
            + " t USING unnest(?::bigint[], ?::bigint[]) AS c(id, v)"
            + " WHERE t.id = c.id AND t.version = c.v AND t.status = 0";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setArray(1, longArray(c, ids));
      ps.setArray(2, longArray(c, versions));
      return ps.executeUpdate();
    }
  }

  @Override
  public int updateIfCurrent(Connection c, String table, List<Transition> transitions)
      throws SQLException {
    String sql =
        "UPDATE "
            + table
            + " t SET status = c.st, attempts = t.attempts + c.ad, version = t.version + 1,"
            + " next_retry_at = CASE WHEN c.keep THEN t.next_retry_at ELSE "
            + now()
            + " + c.delay * interval '1 millisecond' END,"
            + " last_error = COALESCE(c.err, t.last_error),"
            + " lease_owner = CASE WHEN c.keep THEN t.lease_owner END, updated_at = "
            + now()
            + " FROM unnest(?::bigint[], ?::bigint[], ?::smallint[], ?::bigint[], ?::varchar[],"
            + " ?::int[], ?::boolean[]) AS c(id, v, st, delay, err, ad, keep)"
            + " WHERE t.id = c.id AND t.version = c.v AND t.status = 0";
    int n = transitions.size();
    Long[] ids = new Long[n];
    Long[] versions = new Long[n];
    Short[] statuses = new Short[n];
    Long[] delays = new Long[n];
    String[] errors = new String[n];
    Integer[] deltas = new Integer[n];
    Boolean[] keep = new Boolean[n];
    for (int i = 0; i < n; i++) {
      Transition t = transitions.get(i);
      ids[i] = t.id();
      versions[i] = t.version();
      statuses[i] = (short) statusCode(t.status());
      delays[i] = t.status() == MessageStatus.PENDING ? t.delayMillis() : 0L;
      errors[i] = t.lastError();
      deltas[i] = t.attemptsDelta();
      keep[i] = t.keepLease();
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setArray(1, c.createArrayOf("int8", ids));
      ps.setArray(2, c.createArrayOf("int8", versions));
      ps.setArray(3, c.createArrayOf("int2", statuses));
      ps.setArray(4, c.createArrayOf("int8", delays));
      ps.setArray(5, c.createArrayOf("varchar", errors));
      ps.setArray(6, c.createArrayOf("int4", deltas));
      ps.setArray(7, c.createArrayOf("bool", keep));
      return ps.executeUpdate();
    }
  }

  /** One statement: {@code UPDATE ... FROM unnest(ids, versions) ... RETURNING id}. */
  @Override
  public java.util.Set<Long> renewLeases(
      Connection c, String table, long[] ids, long[] versions, long leaseMillis)
      throws SQLException {
    String sql =
        "UPDATE "
            + table
            + " t SET next_retry_at = "
            + plusMillis(now())
            + " FROM unnest(?::bigint[], ?::bigint[]) AS c(id, v)"
            + " WHERE t.id = c.id AND t.version = c.v AND t.status = 0 RETURNING t.id";
    java.util.Set<Long> matched = new java.util.TreeSet<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, leaseMillis);
      ps.setArray(2, longArray(c, ids));
      ps.setArray(3, longArray(c, versions));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          matched.add(rs.getLong(1));
        }
      }
    }
    return matched;
  }

  @Override
  public String deleteBatchSql(String table, String keyColumns, String condition) {
    return "DELETE FROM "
        + table
        + " WHERE ("
        + keyColumns
        + ") IN (SELECT "
        + keyColumns
        + " FROM "
        + table
        + " WHERE "
        + condition
        // locked in the subquery, which PostgreSQL checks again on a row that changed while it
        // waited; without it a row changed meanwhile (a DEAD message requeued) was deleted by the
        // subquery's old answer. A row another session holds is left for the next batch or purge
        + " LIMIT ? FOR UPDATE SKIP LOCKED)";
  }

  private static Array longArray(Connection c, long[] values) throws SQLException {
    Long[] boxed = new Long[values.length];
    for (int i = 0; i < values.length; i++) {
      boxed[i] = values[i];
    }
    return c.createArrayOf("int8", boxed);
  }
}
