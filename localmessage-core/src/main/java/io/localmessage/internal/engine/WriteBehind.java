package io.localmessage.internal.engine;

import io.localmessage.internal.store.MessageQueue;
import io.localmessage.internal.store.SqlErrors;
import io.localmessage.spi.EngineListener;
import io.localmessage.spi.Transition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes outcomes back in batches on one thread: whatever finished while the previous statement ran
 * goes out in the next one, so under load one commit covers many messages while a lone message is
 * written at once. Each row keeps its own version check.
 *
 * <p>A batch the database cannot take right now (connection lost, server restarting, deadlock) is
 * retried with backoff until each outcome's deadline, the lease end minus the write-back margin, so
 * an outage shorter than that loses no outcome; an outcome past its deadline is dropped (counted):
 * its message runs again when the lease ends. A batch the database refuses for its content falls
 * back to row by row, so one bad row cannot sink its neighbours.
 */
final class WriteBehind {
  private static final Logger log = LoggerFactory.getLogger(WriteBehind.class);
  private static final long FIRST_RETRY_MS = 50;
  private static final long MAX_RETRY_MS = 2000;
  private static final long BURST_GAP_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
  private static final long MAX_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
  private static final String UNSTORABLE_ERROR =
      "(the error text of this outcome could not be stored)";

  private final MessageQueue messages;
  private final EngineListener listener;
  private final LoopHealth health;
  private final Ticker ticker;
  private final int maxBatch;
  private final java.util.function.ObjLongConsumer<String> retryDueInMillis;
  private final BlockingQueue<WriteItem> queue = new LinkedBlockingQueue<>();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile boolean halted;

  WriteBehind(
      MessageQueue queue,
      EngineListener listener,
      Duration stuckAfter,
      int maxBatch,
      String replica,
      Ticker ticker,
      java.util.function.ObjLongConsumer<String> retryDueInMillis) {
    this.ticker = ticker;
    this.retryDueInMillis = retryDueInMillis;
    this.messages = queue;
    this.listener = listener;
    this.health = new LoopHealth("writer", ticker, stuckAfter, this::alive);
    this.maxBatch = maxBatch;
    this.thread = new Thread(this::loop, "lm-writer-" + replica);
    this.thread.setDaemon(true);
    this.thread.start();
  }

  boolean alive() {
    Thread t = thread;
    return t == null || t.isAlive();
  }

  LoopHealth health() {
    return health;
  }

  void submit(WriteItem item) {
    if (halted) {
      item.onWritten().run();
      return;
    }
    queue.add(item);
  }

  /** Writes what is queued, then stops; waits at most {@code timeout}. */
  void close(Duration timeout) {
    running = false;
    try {
      thread.join(Math.max(1, timeout.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      // give up on what is left: those messages stay leased and run again when their leases end,
      // which is better than a writer retrying against a pool the application is closing
      halted = true;
      List<WriteItem> left = new ArrayList<>();
      queue.drainTo(left);
      thread.interrupt();
      log.warn("event=writer_stop_timeout dropped_outcomes={}", left.size());
      left.forEach(i -> i.onWritten().run());
    }
  }

  /** Drops everything queued and stops at once, as a crash would. */
  void halt() {
    halted = true;
    running = false;
    List<WriteItem> left = new ArrayList<>();
    queue.drainTo(left);
    thread.interrupt();
    left.forEach(i -> i.onWritten().run());
  }

  /** Waits at most {@code timeout} for the writer's thread to leave (after {@link #halt()}). */
  void awaitStopped(Duration timeout) {
    try {
      thread.join(Math.max(1, timeout.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void loop() {
    List<WriteItem> batch = new ArrayList<>(maxBatch);
    while (!halted) {
      try {
        WriteItem first = queue.poll(50, TimeUnit.MILLISECONDS);
        if (first == null) {
          health.success();
          if (!running) {
            return;
          }
          continue;
        }
        batch.add(first);
        collectBurst(batch);
        write(batch);
      } catch (InterruptedException e) {
        if (halted) {
          return;
        }
      } catch (Throwable t) {
        // nothing may stop the writer: outcomes of this batch that were not written run again
        // when their leases end
        health.failure(t);
        log.error("event=writer_failed tickets={} error={}", batch.size(), t.toString());
        batch.forEach(i -> safeRun(i.onWritten()));
      } finally {
        batch.clear();
      }
    }
  }

  /**
   * Takes what is queued, then keeps taking while outcomes still arrive: handlers of one claim
   * finish in a burst, and waiting for its tail ({@link #BURST_GAP_NANOS} of quiet ends it, {@link
   * #MAX_LINGER_NANOS} at most) turns several small write-backs into one.
   */
  private void collectBurst(List<WriteItem> batch) throws InterruptedException {
    long deadline = ticker.nanos() + MAX_LINGER_NANOS;
    while (batch.size() < maxBatch) {
      queue.drainTo(batch, maxBatch - batch.size());
      long left = Math.min(BURST_GAP_NANOS, deadline - ticker.nanos());
      if (batch.size() >= maxBatch || left <= 0 || !running) {
        return;
      }
      WriteItem next = queue.poll(left, TimeUnit.NANOSECONDS);
      if (next == null) {
        return;
      }
      batch.add(next);
    }
  }

  private void write(List<WriteItem> batch) throws InterruptedException {
    Map<String, List<WriteItem>> deletes = new LinkedHashMap<>();
    Map<String, List<WriteItem>> updates = new LinkedHashMap<>();
    for (WriteItem item : batch) {
      (item.isDelete() ? deletes : updates)
          .computeIfAbsent(item.bizType(), t -> new ArrayList<>())
          .add(item);
    }
    for (Map.Entry<String, List<WriteItem>> e : deletes.entrySet()) {
      writeGroup(e.getKey(), e.getValue());
    }
    for (Map.Entry<String, List<WriteItem>> e : updates.entrySet()) {
      writeGroup(e.getKey(), e.getValue());
    }
  }

  /** Writes one group of deletes or of updates of one type, retrying until the deadlines. */
  private void writeGroup(String bizType, List<WriteItem> items) throws InterruptedException {
    List<WriteItem> pending = items;
    long delay = FIRST_RETRY_MS;
    int attempt = 0;
    while (!pending.isEmpty()) {
      if (halted) {
        pending.forEach(i -> safeRun(i.onWritten()));
        return;
      }
      if (attempt > 0) {
        // a late outcome is always tried once (the version check keeps it safe); only retries
        // stop at the deadline
        pending = dropExpired(bizType, pending);
        if (pending.isEmpty()) {
          return;
        }
      }
      try {
        done(bizType, pending, writeNow(pending));
        health.success();
        return;
      } catch (RuntimeException e) {
        health.failure(e);
        attempt++;
        if (!SqlErrors.isTransient(e)) {
          // the database refuses something in the batch: find the row, let the others through
          pending = rowByRow(bizType, pending);
          if (pending.isEmpty()) {
            return;
          }
        }
        log.warn(
            "event=write_back_retry biz_type={} tickets={} attempt={} error={}",
            bizType,
            pending.size(),
            attempt,
            Threads.describe(e));
        long untilDeadline = earliestDeadlineMillis(pending);
        TimeUnit.MILLISECONDS.sleep(Math.max(1, Math.min(delay, untilDeadline)));
        delay = Math.min(MAX_RETRY_MS, delay * 2);
      }
    }
  }

  /**
   * Writes each item alone. Returns the items that failed because the database is unavailable (to
   * retry as a batch); an item refused on its own is tried once more without its error text, then
   * dropped and counted.
   */
  private List<WriteItem> rowByRow(String bizType, List<WriteItem> items) {
    List<WriteItem> retry = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      WriteItem item = items.get(i);
      try {
        done(bizType, List.of(item), writeNow(List.of(item)));
      } catch (RuntimeException e) {
        if (SqlErrors.isTransient(e)) {
          retry.addAll(items.subList(i, items.size()));
          return retry;
        }
        writeWithoutError(bizType, item, e);
      }
    }
    return retry;
  }

  private void writeWithoutError(String bizType, WriteItem item, RuntimeException refused) {
    Transition t = item.transition();
    if (t != null && t.lastError() != null) {
      WriteItem plain =
          item.withTransition(
              new Transition(
                  t.id(),
                  t.version(),
                  t.status(),
                  t.delayMillis(),
                  UNSTORABLE_ERROR,
                  t.attemptsDelta(),
                  t.keepLease()));
      try {
        done(bizType, List.of(plain), writeNow(List.of(plain)));
        log.warn(
            "event=write_back_without_error_text biz_type={} id={} error={}",
            bizType,
            item.id(),
            Threads.describe(refused));
        return;
      } catch (RuntimeException again) {
        refused = again;
      }
    }
    dropped(bizType, List.of(item), "refused by the database: " + Threads.describe(refused));
  }

  private int writeNow(List<WriteItem> items) {
    if (items.get(0).isDelete()) {
      long[] ids = new long[items.size()];
      long[] versions = new long[items.size()];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = items.get(i).id();
        versions[i] = items.get(i).version();
      }
      return messages.deleteIfCurrent(ids, versions);
    }
    List<Transition> transitions = new ArrayList<>(items.size());
    for (WriteItem item : items) {
      transitions.add(item.transition());
    }
    return messages.updateIfCurrent(transitions);
  }

  private void done(String bizType, List<WriteItem> items, int matched) {
    if (matched < items.size()) {
      int conflicts = items.size() - matched;
      log.info("event=cas_conflict biz_type={} dropped={} ids={}", bizType, conflicts, ids(items));
      try {
        listener.casConflicts(bizType, conflicts);
      } catch (RuntimeException e) {
        log.warn("event=listener_failed error={}", e.toString());
      }
    }
    items.stream()
        .filter(i -> i.writeBack() instanceof WriteBack.Update u && u.makesDue())
        .mapToLong(i -> ((WriteBack.Update) i.writeBack()).transition().delayMillis())
        .min()
        .ifPresent(millis -> retryDueInMillis.accept(bizType, millis));
    items.forEach(i -> safeRun(i.onWritten()));
  }

  private List<WriteItem> dropExpired(String bizType, List<WriteItem> items) {
    long now = ticker.nanos();
    List<WriteItem> live = new ArrayList<>(items.size());
    List<WriteItem> expired = new ArrayList<>();
    for (WriteItem item : items) {
      (now - item.deadlineNanos() >= 0 ? expired : live).add(item);
    }
    if (!expired.isEmpty()) {
      dropped(bizType, expired, "the lease ends before the outcome could be written");
    }
    return live;
  }

  private void dropped(String bizType, List<WriteItem> items, String why) {
    // the outcomes are lost, not the messages: they run again when their leases end
    log.error(
        "event=write_back_dropped biz_type={} tickets={} ids={} reason={}",
        bizType,
        items.size(),
        ids(items),
        why);
    try {
      listener.writeBackDropped(bizType, items.size());
    } catch (RuntimeException e) {
      log.warn("event=listener_failed error={}", e.toString());
    }
    items.forEach(i -> safeRun(i.onWritten()));
  }

  private long earliestDeadlineMillis(List<WriteItem> items) {
    long now = ticker.nanos();
    long min = Long.MAX_VALUE;
    for (WriteItem i : items) {
      min = Math.min(min, i.deadlineNanos() - now);
    }
    return TimeUnit.NANOSECONDS.toMillis(Math.max(0, min));
  }

  private static void safeRun(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      log.warn("event=on_written_failed error={}", e.toString());
    }
  }

  private static String ids(List<WriteItem> items) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < items.size() && i < 20; i++) {
      sb.append(i == 0 ? "" : ",").append(items.get(i).id());
    }
    return items.size() > 20 ? sb.append(",...").toString() : sb.toString();
  }
}
