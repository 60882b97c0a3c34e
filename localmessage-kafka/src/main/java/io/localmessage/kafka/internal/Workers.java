package io.localmessage.kafka.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker threads ({@code lm-inbox-<name>-<n>}, {@code concurrency} of them) that run lanes: a
 * lane runs on one worker at a time, batch after batch, and gives its worker up when it is empty,
 * waits for a retry, or other lanes are waiting. A record whose handler throws is retried on its
 * own after a backoff (its lane waits on a timer, not on a thread), then parked; a database failure
 * makes the lane wait and try the same records again. Not API.
 */
final class Workers {
  private static final Logger log = LoggerFactory.getLogger(Workers.class);

  /** What a step asks for: go on, or run again after a delay. */
  private static final long GO_ON = -1;

  private final InboxLoop.Config cfg;
  private final Applier applier;
  private final ScheduledThreadPoolExecutor pool;
  private final AtomicInteger waiting = new AtomicInteger();

  Workers(InboxLoop.Config cfg, Applier applier) {
    this.cfg = cfg;
    this.applier = applier;
    AtomicInteger n = new AtomicInteger();
    this.pool =
        new ScheduledThreadPoolExecutor(
            cfg.concurrency(),
            r -> {
              Thread t = new Thread(r, "lm-inbox-" + cfg.name() + "-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    pool.setRemoveOnCancelPolicy(true);
    pool.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  /** Hands {@code lane} to a worker (the lane said it must run). */
  void submit(Lane lane) {
    waiting.incrementAndGet();
    try {
      pool.execute(
          () -> {
            waiting.decrementAndGet();
            run(lane);
          });
    } catch (RejectedExecutionException e) {
      waiting.decrementAndGet();
      lane.cannotRun();
    }
  }

  /** No new runs; running ones finish their transaction. */
  void shutdown() {
    pool.shutdown();
  }

  /** Interrupts the handlers still running. */
  void interrupt() {
    pool.shutdownNow();
  }

  boolean awaitTermination(Duration d) throws InterruptedException {
    return pool.awaitTermination(d.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void run(Lane lane) {
    if (!lane.begin()) {
      return;
    }
    long delay;
    try (Applier.Session s = applier.session()) {
      do {
        delay = step(lane, s);
      } while (delay == GO_ON && lane.held() > 0 && !lane.retired() && waiting.get() == 0);
    } catch (RuntimeException | Error e) {
      // never lose a lane: whatever went wrong, it runs again after a while
      log.error(
          "event=inbox_lane_failed consumer={} partition={} error={}",
          cfg.name(),
          lane.tp,
          e.toString(),
          e);
      delay = infraDelay(lane).toMillis();
    }
    if (delay == GO_ON) {
      if (lane.end()) {
        submitAgain(lane);
      }
    } else {
      long d = delay;
      lane.endWaiting(
          () -> {
            try {
              return pool.schedule(() -> run(lane), d, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
              return null;
            }
          });
    }
  }

  /** The lane stays scheduled and goes to the back of the line, after the waiting lanes. */
  private void submitAgain(Lane lane) {
    try {
      pool.execute(() -> run(lane));
    } catch (RejectedExecutionException e) {
      lane.cannotRun();
    }
  }

  /** One transaction's worth of work; returns {@link #GO_ON} or the delay before the next. */
  private long step(Lane lane, Applier.Session s) {
    if (lane.retired()) {
      return GO_ON;
    }
    Lane.Retry retry = lane.retry();
    if (retry != null) {
      return retryStep(lane, retry, s);
    }
    List<ConsumerRecord<byte[], byte[]>> records = lane.peek(cfg.batchSize());
    if (records.isEmpty()) {
      return GO_ON;
    }
    Applier.Result r = applier.apply(s, records);
    if (r.infra()) {
      return storeFailed(lane, records.get(0), r.error());
    }
    lane.infraOk();
    lane.done(r.done());
    if (r.failedAt() < 0 || lane.retired()) {
      return GO_ON; // a retired lane only finishes the transaction in hand
    }
    ConsumerRecord<byte[], byte[]> failed = records.get(r.failedAt());
    cfg.metrics().failed(failed.topic());
    Lane.Retry first = new Lane.Retry(failed, EventIds.of(failed), 1, r.error(), false);
    lane.startRetry(first);
    return afterFailure(lane, first, s);
  }

  private long retryStep(Lane lane, Lane.Retry retry, Applier.Session s) {
    if (retry.parking()) {
      return park(lane, retry, s);
    }
    Applier.Result r = applier.apply(s, List.of(retry.record()));
    if (r.infra()) {
      return storeFailed(lane, retry.record(), r.error());
    }
    lane.infraOk();
    if (r.failedAt() < 0) {
      lane.retryDone();
      return GO_ON;
    }
    if (lane.retired()) {
      return GO_ON;
    }
    cfg.metrics().failed(retry.record().topic());
    Lane.Retry next =
        new Lane.Retry(retry.record(), retry.id(), retry.attempts() + 1, r.error(), false);
    lane.updateRetry(next);
    return afterFailure(lane, next, s);
  }

  private long afterFailure(Lane lane, Lane.Retry retry, Applier.Session s) {
    ConsumerRecord<byte[], byte[]> r = retry.record();
    if (retry.attempts() >= cfg.maxAttempts()) {
      Lane.Retry parking = new Lane.Retry(r, retry.id(), retry.attempts(), retry.error(), true);
      lane.updateRetry(parking);
      return park(lane, parking, s);
    }
    Duration delay = backoff(retry.attempts());
    log.warn(
        "event=inbox_handler_failed consumer={} message_id={} topic={} partition={} offset={}"
            + " attempt={} retry_in={} error={}",
        cfg.name(),
        retry.id(),
        r.topic(),
        r.partition(),
        r.offset(),
        retry.attempts(),
        delay,
        retry.error());
    return delay.toMillis();
  }

  private long park(Lane lane, Lane.Retry retry, Applier.Session s) {
    ConsumerRecord<byte[], byte[]> r = retry.record();
    if (!applier.park(s, r, retry.id(), retry.attempts(), retry.error())) {
      return infraDelay(lane).toMillis();
    }
    lane.infraOk();
    lane.retryDone();
    cfg.metrics().parked(r.topic());
    log.error(
        "event=inbox_parked consumer={} message_id={} topic={} partition={} offset={} attempts={}"
            + " error={}",
        cfg.name(),
        retry.id(),
        r.topic(),
        r.partition(),
        r.offset(),
        retry.attempts(),
        retry.error());
    return GO_ON;
  }

  private long storeFailed(Lane lane, ConsumerRecord<byte[], byte[]> r, String error) {
    Duration delay = infraDelay(lane);
    log.warn(
        "event=inbox_store_failed consumer={} topic={} partition={} offset={} retry_in={}"
            + " error={}",
        cfg.name(),
        r.topic(),
        r.partition(),
        r.offset(),
        delay,
        error);
    return delay.toMillis();
  }

  private Duration infraDelay(Lane lane) {
    return backoff(lane.infraFailed());
  }

  /** Exponential from the initial delay, capped at the maximum. */
  Duration backoff(int attempt) {
    long initial = cfg.backoffInitial().toMillis();
    long max = cfg.backoffMax().toMillis();
    long d = initial << Math.min(Math.max(attempt, 1) - 1, 20);
    return Duration.ofMillis(Math.min(Math.max(d, initial), max));
  }
}
