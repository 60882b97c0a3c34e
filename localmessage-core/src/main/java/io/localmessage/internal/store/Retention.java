package io.localmessage.internal.store;

import io.localmessage.MessageStatus;
import io.localmessage.StoreException;
import io.localmessage.internal.dialect.Codes;
import io.localmessage.spi.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retention purge of terminal messages and of inbox rows: bounded batches, each its own short
 * statement at READ COMMITTED, served by an index, so a purge never holds locks that claims wait
 * for.
 */
public final class Retention {
  private static final Logger log = LoggerFactory.getLogger(Retention.class);

  /** Tries of one purge statement that a deadlock rolled back. */
  private static final int DEADLOCK_TRIES = 5;

  private final DataSource dataSource;
  private final Dialect dialect;
  private final String table;

  /** Purges of the message table {@code table}. */
  public Retention(DataSource dataSource, Dialect dialect, String table) {
    this.dataSource = dataSource;
    this.dialect = dialect;
    this.table = table;
  }

  /**
   * Deletes terminal messages of {@code status} last updated more than {@code olderThan} ago, of
   * {@code bizType} or, when it is null, of every type present (one type after the other), in
   * statements of at most {@code batchSize} rows, each its own short transaction at READ COMMITTED.
   * Every statement is served by the due index {@code (biz_type, status, next_retry_at)}: every
   * terminal transition sets {@code next_retry_at} to its own time, so the range {@code
   * next_retry_at < cutoff} holds every candidate and {@code updated_at} decides. Without a type
   * the types are found by one index probe each, never by a table scan, and no statement takes gap
   * locks that the claims of PENDING messages would wait for.
   */
  public int purge(MessageStatus status, String bizType, Duration olderThan, int batchSize) {
    if (bizType != null) {
      return purgeType(status, bizType, olderThan, batchSize);
    }
    int total = 0;
    for (String type = Jdbc.nextBizType(dataSource, table, null);
        type != null;
        type = Jdbc.nextBizType(dataSource, table, type)) {
      total += purgeType(status, type, olderThan, batchSize);
    }
    return total;
  }

  private int purgeType(MessageStatus status, String bizType, Duration olderThan, int batchSize) {
    String cutoff = dialect.plusMillis(dialect.now());
    String aged =
        "biz_type = ? AND status = ? AND next_retry_at < " + cutoff + " AND updated_at < " + cutoff;
    boolean dead = status == MessageStatus.DEAD;
    String condition = dead ? aged + " AND id NOT IN (" + blockingHeads() + ")" : aged;
    int deleted =
        deleteInBatches(
            dataSource,
            dialect.deleteBatchSql(table, "id", condition),
            batchSize,
            ps -> {
              bindAged(ps, status, bizType, olderThan);
              if (dead) {
                ps.setString(5, bizType);
              }
            },
            "purging " + status + " messages of " + bizType);
    if (dead) {
      reportKeptHeads(bizType, olderThan, cutoff);
    }
    return deleted;
  }

  private static void bindAged(
      PreparedStatement ps, MessageStatus status, String bizType, Duration olderThan)
      throws SQLException {
    ps.setString(1, bizType);
    ps.setInt(2, Codes.of(status));
    ps.setLong(3, -olderThan.toMillis());
    ps.setLong(4, -olderThan.toMillis());
  }

  /**
   * The ids of DEAD messages of one biz type (the one parameter) that a later PENDING or DEAD
   * message of their aggregate waits behind: the heads that block an ordered aggregate. A purge
   * keeps them; only an operator's cancel or requeue decides them (design 8.8). A derived table
   * made DISTINCT, so MySQL materializes it instead of refusing a subquery on the table a DELETE
   * changes.
   */
  private String blockingHeads() {
    return "SELECT id FROM (SELECT DISTINCT h.id FROM "
        + table
        + " h JOIN "
        + table
        + " s ON s.aggregate_id = h.aggregate_id AND s.biz_type = h.biz_type AND s.id > h.id"
        + " WHERE h.biz_type = ? AND h.status = 2 AND s.status IN (0, 2)) blocking";
  }

  private void reportKeptHeads(String bizType, Duration olderThan, String cutoff) {
    String sql =
        "SELECT COUNT(*) FROM "
            + table
            + " WHERE biz_type = ? AND status = ? AND next_retry_at < "
            + cutoff
            + " AND updated_at < "
            + cutoff
            + " AND id IN ("
            + blockingHeads()
            + ")";
    long kept =
        Jdbc.queryLong(
            dataSource,
            sql,
            ps -> {
              bindAged(ps, MessageStatus.DEAD, bizType, olderThan);
              ps.setString(5, bizType);
            },
            "counting the DEAD heads the purge of " + bizType + " kept");
    if (kept > 0) {
      log.warn(
          "event=purge_kept_dead_heads biz_type={} kept={} note=a later message of each one's"
              + " aggregate waits behind it; cancel or requeue them to decide",
          bizType,
          kept);
    }
  }

  /** Deletes inbox rows received more than {@code olderThan} ago, {@code batchSize} at a time. */
  public static int purgeInbox(
      DataSource dataSource,
      Dialect dialect,
      String inboxTable,
      Duration olderThan,
      int batchSize) {
    String condition = "received_at < " + dialect.plusMillis(dialect.now());
    return deleteInBatches(
        dataSource,
        dialect.deleteBatchSql(inboxTable, "consumer, message_id", condition),
        batchSize,
        ps -> ps.setLong(1, -olderThan.toMillis()),
        "purging the inbox");
  }

  /**
   * One batch, executed again when the database chose it as a deadlock victim (it rolled back only
   * this statement, so running it again deletes nothing twice): the rows it locks in index order
   * meet write-backs and operator actions locking by primary key. Up to {@value #DEADLOCK_TRIES}
   * tries.
   */
  private static int deleteBatch(PreparedStatement ps) throws SQLException {
    for (int attempt = 1; ; attempt++) {
      try {
        return ps.executeUpdate();
      } catch (SQLException e) {
        if (!SqlErrors.rolledBack(e) || attempt >= DEADLOCK_TRIES) {
          throw e;
        }
        log.debug("event=purge_batch_retried attempt={} error={}", attempt, e.getMessage());
      }
    }
  }

  private static int deleteInBatches(
      DataSource dataSource, String sql, int batchSize, Jdbc.Binder binder, String what) {
    int total = 0;
    try (Connection c = Transactions.autocommit(dataSource)) {
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
          int n = deleteBatch(ps);
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
}
