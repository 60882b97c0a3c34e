package io.localmessage.internal;

import io.localmessage.jdbc.TicketStore;
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
 * goes out in the next one, so under load one commit covers many tickets (DESIGN invariant 4) while
 * a lone ticket is written at once. Each row keeps its own version check.
 */
final class WriteBehind {
  private static final Logger log = LoggerFactory.getLogger(WriteBehind.class);
  private static final long[] RETRY_DELAYS_MS = {100, 500, 2000};
  private static final long BURST_GAP_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
  private static final long MAX_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  private final TicketStore store;
  private final EngineListener listener;
  private final int maxBatch;
  private final BlockingQueue<WriteItem> queue = new LinkedBlockingQueue<>();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile boolean halted;

  WriteBehind(TicketStore store, EngineListener listener, int maxBatch, String replicaId) {
    this.store = store;
    this.listener = listener;
    this.maxBatch = maxBatch;
    this.thread = new Thread(this::loop, "lm-writer-" + replicaId);
    this.thread.setDaemon(true);
    this.thread.start();
  }

  void submit(WriteItem item) {
    if (halted) {
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
      // give up on what is left: those tickets stay leased and run again when their leases end,
      // which is better than a writer retrying against a pool the application is closing
      int dropped = queue.size();
      halted = true;
      queue.clear();
      thread.interrupt();
      log.warn("event=writer_stop_timeout dropped_outcomes={}", dropped);
    }
  }

  /** Drops everything queued and stops at once, as a crash would (tests). */
  void halt() {
    halted = true;
    running = false;
    queue.clear();
    thread.interrupt();
  }

  private void loop() {
    List<WriteItem> batch = new ArrayList<>(maxBatch);
    while (!halted) {
      WriteItem first;
      try {
        first = queue.poll(50, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        if (halted) {
          return;
        }
        continue;
      }
      if (first == null) {
        if (!running) {
          return;
        }
        continue;
      }
      batch.add(first);
      collectBurst(batch);
      write(batch);
      batch.clear();
    }
  }

  /**
   * Takes what is queued, then keeps taking while outcomes still arrive: handlers of one claim
   * finish in a burst, and waiting for its tail ({@link #BURST_GAP_NANOS} of quiet ends it, {@link
   * #MAX_LINGER_NANOS} at most) turns several small write-backs into one.
   */
  private void collectBurst(List<WriteItem> batch) {
    long deadline = System.nanoTime() + MAX_LINGER_NANOS;
    while (batch.size() < maxBatch) {
      queue.drainTo(batch, maxBatch - batch.size());
      long left = Math.min(BURST_GAP_NANOS, deadline - System.nanoTime());
      if (batch.size() >= maxBatch || left <= 0 || !running) {
        return;
      }
      WriteItem next;
      try {
        next = queue.poll(left, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        return; // only halt() and a close timeout interrupt this thread; the loop checks them
      }
      if (next == null) {
        return;
      }
      batch.add(next);
    }
  }

  private void write(List<WriteItem> batch) {
    Map<String, List<WriteItem>> deletes = new LinkedHashMap<>();
    Map<String, List<WriteItem>> updates = new LinkedHashMap<>();
    for (WriteItem item : batch) {
      (item.isDelete() ? deletes : updates)
          .computeIfAbsent(item.bizType(), t -> new ArrayList<>())
          .add(item);
    }
    deletes.forEach((type, items) -> writeGroup(type, items, true));
    updates.forEach((type, items) -> writeGroup(type, items, false));
  }

  private void writeGroup(String bizType, List<WriteItem> items, boolean delete) {
    int matched = -1;
    for (int attempt = 0; attempt <= RETRY_DELAYS_MS.length && !halted; attempt++) {
      try {
        matched = delete ? deleteAll(items) : updateAll(items);
        break;
      } catch (RuntimeException e) {
        if (attempt == RETRY_DELAYS_MS.length) {
          // the outcomes are lost, not the tickets: they run again when their leases end
          log.error(
              "event=write_back_failed biz_type={} tickets={} ids={} error={}",
              bizType,
              items.size(),
              ids(items),
              e.toString());
          break;
        }
        log.warn(
            "event=write_back_retry biz_type={} tickets={} attempt={} error={}",
            bizType,
            items.size(),
            attempt + 1,
            e.toString());
        try {
          Thread.sleep(RETRY_DELAYS_MS[attempt]);
        } catch (InterruptedException ie) {
          if (halted) {
            return;
          }
        }
      }
    }
    if (matched >= 0 && matched < items.size()) {
      int conflicts = items.size() - matched;
      log.info("event=cas_conflict biz_type={} dropped={} ids={}", bizType, conflicts, ids(items));
      try {
        listener.casConflicts(bizType, conflicts);
      } catch (RuntimeException e) {
        log.warn("event=listener_failed error={}", e.toString());
      }
    }
    for (WriteItem item : items) {
      if (item.onWritten() != null) {
        item.onWritten().run();
      }
    }
  }

  private int deleteAll(List<WriteItem> items) {
    long[] ids = new long[items.size()];
    long[] versions = new long[items.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = items.get(i).id();
      versions[i] = items.get(i).version();
    }
    return store.deleteIfCurrent(ids, versions);
  }

  private int updateAll(List<WriteItem> items) {
    List<Transition> transitions = new ArrayList<>(items.size());
    for (WriteItem item : items) {
      transitions.add(item.transition());
    }
    return store.updateIfCurrent(transitions);
  }

  private static String ids(List<WriteItem> items) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < items.size() && i < 20; i++) {
      sb.append(i == 0 ? "" : ",").append(items.get(i).id());
    }
    return items.size() > 20 ? sb.append(",...").toString() : sb.toString();
  }
}
