package io.localmessage.kafka.internal;

import io.localmessage.Outcome;
import io.localmessage.internal.store.TransactionGuard;
import io.localmessage.internal.store.Transactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database side of the inbox consumer: applies records of one partition in one transaction
 * (inbox rows and effects together), and parks records. A handler that throws rolls the whole
 * transaction back; the records before it are then applied again without it, in a transaction of
 * their own, so one bad record never takes its neighbours' effects with it and never makes them
 * apply twice. A failure of the database itself (no connection, inbox insert, rollback or commit
 * failing) reports {@link Result#infra()}: nothing of the batch counts as done, and the batch is
 * applied again later, the inbox skipping whatever a commit with an unknown result did commit. Not
 * API.
 */
final class Applier {
  private static final Logger log = LoggerFactory.getLogger(Applier.class);

  /** Inbox ids recorded per statement; the batch's time budget is checked between chunks. */
  static final int CHUNK = 100;

  /**
   * What one {@link #apply} did: the first {@code done} records committed (applied or duplicates);
   * when {@code failedAt >= 0}, the handler of that record (= {@code done}) threw {@code error};
   * when {@code infra}, nothing was done.
   */
  record Result(int done, int failedAt, String error, boolean infra) {
    static Result infra(String error) {
      return new Result(0, -1, error, true);
    }
  }

  private final InboxLoop.Config cfg;
  private final InboxRows rows;

  Applier(InboxLoop.Config cfg, InboxRows rows) {
    this.cfg = cfg;
    this.rows = rows;
  }

  /** One worker's connection, opened when first needed and kept while its lane keeps running. */
  final class Session implements AutoCloseable {
    private Connection connection;

    Connection connection() throws SQLException {
      if (connection == null) {
        Connection c = cfg.dataSource().getConnection();
        try {
          c.setAutoCommit(false);
        } catch (SQLException | RuntimeException e) {
          closeQuietly(c);
          throw e;
        }
        connection = c;
      }
      return connection;
    }

    /** Gives a connection that failed back to the pool; the next step opens another. */
    void discard() {
      Connection c = connection;
      connection = null;
      if (c != null) {
        rollback(c);
        closeQuietly(c);
      }
    }

    @Override
    public void close() {
      Connection c = connection;
      connection = null;
      if (c != null) {
        // never by restoring autocommit alone: that would commit whatever is open
        if (rollback(c)) {
          Transactions.restoreAutoCommit(c, true);
        }
        closeQuietly(c);
      }
    }
  }

  Session session() {
    return new Session();
  }

  /**
   * Applies {@code records} (in offset order, one partition) in as few transactions as it can: one
   * when nothing fails, bounded by the batch time budget; after a handler failure, a second one for
   * the records before the failing one.
   */
  Result apply(Session s, List<ConsumerRecord<byte[], byte[]>> records) {
    Result first = once(s, records, true);
    if (first.infra() || first.failedAt() < 0) {
      return first;
    }
    int failedAt = first.failedAt();
    String error = first.error();
    while (failedAt > 0) {
      // the transaction was rolled back: its records before the failing one are applied again
      Result prefix = once(s, records.subList(0, failedAt), false);
      if (prefix.infra()) {
        return prefix;
      }
      if (prefix.failedAt() < 0) {
        return new Result(prefix.done(), failedAt, error, false);
      }
      // a handler that failed only this time: that record is the one to retry now
      failedAt = prefix.failedAt();
      error = prefix.error();
    }
    return new Result(0, 0, error, false);
  }

  private Result once(Session s, List<ConsumerRecord<byte[], byte[]>> records, boolean budget) {
    long started = System.nanoTime();
    Connection c;
    try {
      c = s.connection();
    } catch (SQLException | RuntimeException e) {
      s.discard();
      return Result.infra("no connection: " + Outcome.describe(e));
    }
    // the handlers work through a watched view: a caught error that leaves the transaction unable
    // to commit fails that record instead of committing offsets for effects that were rolled back
    TransactionGuard guard = new TransactionGuard(c, rows.dialect());
    try {
      return once(s, c, guard, records, budget, started);
    } finally {
      guard.finish();
    }
  }

  private Result once(
      Session s,
      Connection c,
      TransactionGuard guard,
      List<ConsumerRecord<byte[], byte[]>> records,
      boolean budget,
      long started) {
    List<String> ids = new ArrayList<>(records.size());
    RecordSpans spans = RecordSpans.of(cfg.tracing(), cfg.name(), records.size());
    boolean[] applied = new boolean[records.size()];
    Set<String> seen = new HashSet<>();
    int i = 0;
    while (i < records.size()) {
      if (budget && i > 0 && System.nanoTime() - started > cfg.batchTime().toNanos()) {
        break; // the rest waits for the next transaction: locks and records are not held longer
      }
      int end = Math.min(records.size(), i + CHUNK);
      List<String> chunk = new ArrayList<>(end - i);
      boolean[] first = new boolean[end - i];
      for (int k = i; k < end; k++) {
        String id = EventIds.of(records.get(k));
        ids.add(id);
        // the same event twice in one batch: the later one is a duplicate
        if (seen.add(id)) {
          chunk.add(id);
          first[k - i] = true;
        }
      }
      Set<String> fresh;
      try {
        fresh = rows.recordNew(c, chunk);
      } catch (SQLException | RuntimeException e) {
        s.discard();
        spans.rolledBack();
        return Result.infra("inbox insert failed: " + Outcome.describe(e));
      }
      for (int k = i; k < end; k++) {
        if (!first[k - i] || !fresh.contains(ids.get(k))) {
          spans.duplicate(k, records.get(k), ids.get(k));
          continue;
        }
        String error = null;
        try (var current = spans.applying(k, records.get(k), ids.get(k))) {
          cfg.handler().handle(records.get(k), guard.connection());
          String aborted = guard.abortReason();
          if (aborted == null) {
            applied[k] = true;
          } else {
            error =
                "the handler returned, but "
                    + aborted
                    + "; its effects would not commit. Run a statement whose error is expected"
                    + " under a savepoint";
          }
        } catch (Throwable e) {
          // every Throwable, errors included: a decoder's OutOfMemoryError fails its record, it
          // never reaches the session's close with the batch's transaction still open
          error = Outcome.describe(e);
        }
        if (error != null) {
          spans.failed(k, error);
          spans.rolledBack();
          if (!rollback(c)) {
            s.discard();
            return Result.infra("rollback failed after the handler threw " + error);
          }
          return new Result(0, k, error, false);
        }
      }
      i = end;
    }
    try {
      c.commit();
    } catch (SQLException | RuntimeException e) {
      // whether it committed is unknown: the batch is applied again and the inbox decides
      s.discard();
      spans.rolledBack();
      return Result.infra("commit failed: " + Outcome.describe(e));
    }
    spans.committed();
    committed(records, ids, applied, i);
    return new Result(i, -1, null, false);
  }

  private void committed(
      List<ConsumerRecord<byte[], byte[]>> records, List<String> ids, boolean[] applied, int n) {
    long now = System.currentTimeMillis();
    for (int k = 0; k < n; k++) {
      ConsumerRecord<byte[], byte[]> r = records.get(k);
      if (applied[k]) {
        long createdAt = EventIds.createdAtMillis(r);
        cfg.metrics().applied(r.topic(), createdAt < 0 ? -1 : Math.max(0, now - createdAt));
        if (log.isDebugEnabled()) {
          log.debug(
              "event=inbox_applied consumer={} message_id={} topic={} partition={} offset={}",
              cfg.name(),
              ids.get(k),
              r.topic(),
              r.partition(),
              r.offset());
        }
      } else {
        cfg.metrics().duplicate(r.topic());
        if (log.isDebugEnabled()) {
          log.debug(
              "event=inbox_duplicate consumer={} message_id={} topic={} partition={} offset={}",
              cfg.name(),
              ids.get(k),
              r.topic(),
              r.partition(),
              r.offset());
        }
      }
    }
  }

  /** Writes {@code r} to the dead table in a transaction of its own; false when that failed. */
  boolean park(Session s, ConsumerRecord<byte[], byte[]> r, String id, int attempts, String err) {
    try {
      Connection c = s.connection();
      cfg.deadLetters().insert(c, cfg.name(), id, r, attempts, err);
      c.commit();
      return true;
    } catch (SQLException | RuntimeException e) {
      s.discard();
      log.warn(
          "event=inbox_park_failed consumer={} message_id={} topic={} partition={} offset={}"
              + " error={}",
          cfg.name(),
          id,
          r.topic(),
          r.partition(),
          r.offset(),
          e.toString());
      return false;
    }
  }

  private static boolean rollback(Connection c) {
    try {
      c.rollback();
      return true;
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // nothing more to do with it
    }
  }
}
