package io.localmessage.internal.store;

import io.localmessage.MessageInFlightException;
import io.localmessage.StoreException;
import io.localmessage.internal.dialect.BuiltInDialects;
import io.localmessage.internal.dialect.Predicates;
import io.localmessage.spi.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What operators do: pause and resume a type, cancel, requeue. Every action checks the operator's
 * name and reason first ({@link OperatorInput}), runs in its own short transaction with its audit
 * row, and is logged. An action never races a delivery: the rows it changes are locked, and a
 * message with a live lease is not cancelled.
 */
public final class OperatorActions {
  private static final Logger log = LoggerFactory.getLogger(OperatorActions.class);

  /** Ids per operator statement: far below every database's bind-parameter limit. */
  public static final int OPERATOR_CHUNK = 1000;

  private final OperatorTransactions tx;
  private final Dialect dialect;
  private final Tables tables;
  private final int batchSize;

  /** Actions on {@code tables}; {@code batchSize} ids are looked up per round of a bulk requeue. */
  public OperatorActions(DataSource dataSource, Dialect dialect, Tables tables, int batchSize) {
    this.tx = new OperatorTransactions(dataSource);
    this.dialect = dialect;
    this.tables = tables;
    this.batchSize = batchSize;
  }

  /** Pauses ({@code paused} true) or resumes {@code bizType} on every replica. */
  public void setPaused(String bizType, boolean paused, String operator, String reason) {
    OperatorInput.bizType(bizType);
    String op = OperatorInput.operator(operator);
    String why = OperatorInput.reason(reason);
    ensureControlRow(bizType, op, why);
    tx.inTransaction(
        c -> {
          if (updateControl(c, bizType, paused, op, why) == 0) {
            // no row yet: ensureControlRow could not create it (the database was away then).
            // Created here; one another operator created meanwhile is the row to change
            java.sql.Savepoint before = c.setSavepoint();
            try {
              insertControlRow(c, bizType, op, why);
            } catch (SQLException e) {
              if (!SqlErrors.integrityViolation(e)) {
                throw e;
              }
              c.rollback(before);
            }
            updateControl(c, bizType, paused, op, why);
          }
          audit(c, null, bizType, paused ? "PAUSE" : "RESUME", op, why);
          return null;
        },
        "pausing/resuming " + bizType);
    log.info(
        "event={} biz_type={} operator={} reason={}",
        paused ? "paused" : "resumed",
        bizType,
        op,
        why);
  }

  /**
   * Creates {@code bizType}'s control row (not paused) when it has none, in a statement of its own
   * that commits at once, so the action's transaction only changes an existing row: operators
   * pausing a type for the first time at once then take its row lock in turn. Inside one
   * transaction, InnoDB's locks around a missing key made them deadlock against each other (5 at
   * once outran the retries). A row another operator created meanwhile is fine; any other failure
   * is left to the action, whose own insert still covers a missing row.
   */
  private void ensureControlRow(String bizType, String operator, String reason) {
    try (Connection c = tx.autocommit()) {
      try (PreparedStatement exists =
          c.prepareStatement("SELECT 1 FROM " + tables.control() + " WHERE biz_type = ?")) {
        exists.setString(1, bizType);
        try (java.sql.ResultSet rs = exists.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
      }
      insertControlRow(c, bizType, operator, reason);
    } catch (SQLException | RuntimeException e) {
      // created by another operator meanwhile (a duplicate key), or the database is away: the
      // action's transaction decides
    }
  }

  private void insertControlRow(Connection c, String bizType, String operator, String reason)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + tables.control()
                + " (biz_type, paused, updated_by, reason, updated_at) VALUES (?, 0, ?, ?, "
                + dialect.now()
                + ")")) {
      ps.setString(1, bizType);
      ps.setString(2, operator);
      ps.setString(3, reason);
      ps.executeUpdate();
    }
  }

  /** Sets the paused flag of {@code bizType}'s control row; returns 0 when there is none yet. */
  private int updateControl(
      Connection c, String bizType, boolean paused, String operator, String reason)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE "
                + tables.control()
                + " SET paused = ?, updated_by = ?, reason = ?, updated_at = "
                + dialect.now()
                + " WHERE biz_type = ?")) {
      ps.setInt(1, paused ? 1 : 0);
      ps.setString(2, operator);
      ps.setString(3, reason);
      ps.setString(4, bizType);
      return ps.executeUpdate();
    }
  }

  /**
   * Cancels a PENDING or DEAD message; returns whether it moved. Refuses a message with a live
   * lease (PENDING, claimed, lease end after the database's now) with a {@link
   * MessageInFlightException}. The cancel sets {@code next_retry_at} to its own time, as every
   * terminal transition does, so the purge finds it through the due index.
   */
  public boolean cancel(long id, String operator, String reason) {
    String op = OperatorInput.operator(operator);
    String why = OperatorInput.reason(reason);
    boolean moved;
    try {
      moved = tx.inTransaction(c -> cancelRow(c, id, op, why), "cancelling message " + id);
    } catch (MessageInFlightException e) {
      log.info(
          "event=cancel_refused id={} lease_owner={} lease_end={} operator={}",
          id,
          e.leaseOwner(),
          e.leaseEnd(),
          op);
      throw e;
    }
    log.info("event=cancel id={} moved={} operator={} reason={}", id, moved, op, why);
    return moved;
  }

  private boolean cancelRow(Connection c, long id, String operator, String reason)
      throws SQLException {
    String table = tables.message();
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
          throw new MessageInFlightException(id, owner, dialect.readInstant(rs, 4));
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
  }

  /**
   * Requeues the DEAD messages among {@code ids}; returns how many moved. Works through the ids in
   * transactions of at most {@value #OPERATOR_CHUNK}, so no statement comes near the bind-parameter
   * limits (65,535 on PostgreSQL and MySQL) however many ids are given. A requeued message's age,
   * which {@code maxAge} limits, counts from the requeue ({@code requeued_at}).
   */
  public int requeueDead(Collection<Long> ids, String operator, String reason) {
    Objects.requireNonNull(ids, "ids");
    String op = OperatorInput.operator(operator);
    String why = OperatorInput.reason(reason);
    int moved = requeue(new ArrayList<>(ids), op, why);
    log.info(
        "event=requeue requested={} moved={} operator={} reason={}", ids.size(), moved, op, why);
    return moved;
  }

  /**
   * Requeues every DEAD message of {@code bizType} that was DEAD when it started, each once: the
   * messages are walked in id order from a cursor, so one that is requeued and dies again meanwhile
   * (by this call, a replica or another operator) is not met a second time, and one that died after
   * the start (its {@code updated_at} is later) is left alone. Returns how many moved.
   */
  public int requeueAllDead(String bizType, String operator, String reason) {
    OperatorInput.bizType(bizType);
    String op = OperatorInput.operator(operator);
    String why = OperatorInput.reason(reason);
    long started = System.nanoTime();
    int moved = 0;
    long after = 0;
    while (true) {
      // the database's now minus the time this call has run: its start on the database clock
      long sinceStart = (System.nanoTime() - started) / 1_000_000;
      List<Long> ids = deadIds(bizType, after, sinceStart, batchSize);
      if (ids.isEmpty()) {
        break;
      }
      moved += requeue(ids, op, why);
      if (ids.size() < batchSize) {
        break; // the last batch: no DEAD message of the start above it
      }
      after = ids.get(ids.size() - 1);
    }
    log.info(
        "event=requeue_all biz_type={} moved={} operator={} reason={}", bizType, moved, op, why);
    return moved;
  }

  private int requeue(List<Long> all, String operator, String reason) {
    int moved = 0;
    for (int i = 0; i < all.size(); i += OPERATOR_CHUNK) {
      List<Long> chunk = all.subList(i, Math.min(all.size(), i + OPERATOR_CHUNK));
      moved +=
          tx.inTransaction(
              c -> requeueChunk(c, chunk, operator, reason), "requeueing dead messages");
    }
    return moved;
  }

  private int requeueChunk(Connection c, List<Long> ids, String operator, String reason)
      throws SQLException {
    String table = tables.message();
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
    // one audit row per message, written by one statement rather than one round trip each
    String audit =
        "INSERT INTO "
            + tables.audit()
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
    return BuiltInDialects.isPostgres(dialect)
        ? "id = ANY(?)"
        : "id IN (" + Predicates.placeholders(n) + ")";
  }

  private void bindIds(Connection c, PreparedStatement ps, int first, Collection<Long> ids)
      throws SQLException {
    if (BuiltInDialects.isPostgres(dialect)) {
      ps.setArray(first, c.createArrayOf("int8", ids.toArray()));
      return;
    }
    int p = first;
    for (Long id : ids) {
      ps.setLong(p++, id);
    }
  }

  /**
   * Ids of DEAD messages of a type above {@code after}, in id order, that were DEAD already {@code
   * sinceStartMillis} ago (last changed before then).
   */
  private List<Long> deadIds(String bizType, long after, long sinceStartMillis, int limit) {
    String sql =
        "SELECT id FROM "
            + tables.message()
            + " WHERE biz_type = ? AND status = 2 AND id > ? AND updated_at <= "
            + dialect.plusMillis(dialect.now())
            + " ORDER BY id";
    List<Long> ids = new ArrayList<>();
    try (Connection c = tx.autocommit();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, bizType);
      ps.setLong(2, after);
      ps.setLong(3, -sinceStartMillis);
      ps.setMaxRows(limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
      return ids;
    } catch (SQLException e) {
      throw new StoreException("listing dead messages failed", e);
    }
  }

  private void audit(
      Connection c, Long messageId, String bizType, String action, String operator, String reason)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + tables.audit()
                + " (ticket_id, biz_type, action, operator, reason, at) VALUES (?, ?, ?, ?, ?, "
                + dialect.now()
                + ")")) {
      if (messageId == null) {
        ps.setNull(1, Types.BIGINT);
      } else {
        ps.setLong(1, messageId);
      }
      ps.setString(2, bizType);
      ps.setString(3, action);
      ps.setString(4, operator);
      ps.setString(5, reason);
      ps.executeUpdate();
    }
  }
}
