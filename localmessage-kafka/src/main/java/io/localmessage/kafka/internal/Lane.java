package io.localmessage.kafka.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The records of one assigned partition waiting to be applied, in offset order, and where the
 * partition stands: at most one worker runs a lane at a time, so order within the partition holds,
 * while lanes of different partitions run side by side. The poll thread adds records and retires
 * the lane when the partition goes; the worker takes records off only after their transaction
 * committed (or they were parked) and then advances {@link #committable()}. Not API.
 */
final class Lane {
  /**
   * The record at the head of the lane while it is retried on its own ({@code attempts} handler
   * tries so far, the last one's {@code error}), or parked once {@code parking}.
   */
  record Retry(
      ConsumerRecord<byte[], byte[]> record,
      String id,
      int attempts,
      String error,
      boolean parking) {}

  final TopicPartition tp;
  private final ArrayDeque<ConsumerRecord<byte[], byte[]>> queue = new ArrayDeque<>();
  private Retry retry;
  private boolean scheduled;
  private boolean running;
  private boolean retired;
  private Future<?> timer;
  private Runnable whenIdle;
  private int infraFailures;
  private volatile long committable = -1;

  Lane(TopicPartition tp) {
    this.tp = tp;
  }

  /**
   * Appends polled records; returns true when the caller must submit the lane to a worker (it was
   * neither running nor waiting for a retry).
   */
  synchronized boolean add(List<ConsumerRecord<byte[], byte[]>> records) {
    if (retired) {
      return false;
    }
    queue.addAll(records);
    if (scheduled) {
      return false;
    }
    scheduled = true;
    return true;
  }

  /** Records held: queued plus the one being retried. */
  synchronized int held() {
    return queue.size() + (retry == null ? 0 : 1);
  }

  /** The next offset to commit: everything before it committed in the database; -1 for none. */
  long committable() {
    return committable;
  }

  // ---------------------------------------------------------------- worker side

  /** Marks the start of a run; false when the lane was retired meanwhile (do nothing). */
  synchronized boolean begin() {
    timer = null;
    if (retired) {
      scheduled = false;
      idleNow();
      return false;
    }
    running = true;
    return true;
  }

  /** Up to {@code max} queued records from the head, not removed. */
  synchronized List<ConsumerRecord<byte[], byte[]>> peek(int max) {
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>(Math.min(max, queue.size()));
    for (ConsumerRecord<byte[], byte[]> r : queue) {
      if (out.size() == max) {
        break;
      }
      out.add(r);
    }
    return out;
  }

  /** Removes the first {@code n} queued records, which are done, and advances the offset. */
  synchronized void done(int n) {
    ConsumerRecord<byte[], byte[]> last = null;
    for (int i = 0; i < n; i++) {
      last = queue.poll();
    }
    if (last != null) {
      committable = last.offset() + 1;
    }
  }

  /** Takes the head record off the queue into a retry of its own. */
  synchronized void startRetry(Retry r) {
    if (retired) {
      return;
    }
    ConsumerRecord<byte[], byte[]> head = queue.poll();
    if (head != r.record()) {
      throw new IllegalStateException("the retried record is not the head of " + tp);
    }
    retry = r;
  }

  synchronized Retry retry() {
    return retry;
  }

  synchronized void updateRetry(Retry r) {
    retry = r;
  }

  /** The retried record is done (applied, a duplicate, or parked). */
  synchronized void retryDone() {
    if (retry != null) {
      committable = retry.record().offset() + 1;
      retry = null;
    }
  }

  synchronized boolean retired() {
    return retired;
  }

  int infraFailed() {
    return ++infraFailures;
  }

  void infraOk() {
    infraFailures = 0;
  }

  /**
   * Ends a run. Returns true when the lane should run again at once (more records queued, not
   * retired); otherwise it is idle until the next {@link #add}.
   */
  synchronized boolean end() {
    running = false;
    if (!retired && (retry != null || !queue.isEmpty())) {
      return true;
    }
    scheduled = false;
    idleNow();
    return false;
  }

  /**
   * Ends a run that continues when the timer made by {@code schedule} fires (a backoff). The timer
   * is made under this lane's monitor, so its run cannot begin before this one ended; a null timer
   * (the workers are shutting down) leaves the lane idle.
   */
  synchronized void endWaiting(Supplier<Future<?>> schedule) {
    running = false;
    if (retired) {
      scheduled = false;
      idleNow();
      return;
    }
    timer = schedule.get();
    if (timer == null) {
      scheduled = false;
      idleNow();
    }
  }

  /** The workers refused a run (shutdown): the lane is idle and stays so. */
  synchronized void cannotRun() {
    running = false;
    scheduled = false;
    idleNow();
  }

  // ---------------------------------------------------------------- poll thread side

  /**
   * The partition is gone (revoked, lost, shutdown): drops what is queued, cancels a pending retry
   * and lets a running worker finish its transaction. Nothing of it is applied afterwards.
   */
  synchronized void retire() {
    retired = true;
    if (!running) {
      queue.clear(); // a running worker still takes its batch off; cleared when it ends
      retry = null;
    }
    if (timer != null && timer.cancel(false)) {
      timer = null;
      scheduled = false;
    }
    if (!running && timer == null) {
      scheduled = false;
    }
    if (!scheduled) {
      idleNow();
    }
  }

  /** Whether no worker runs this lane now and none will. */
  synchronized boolean idle() {
    return !scheduled && !running;
  }

  /** Waits until {@link #idle()} or {@code deadlineNanos} (System.nanoTime); true when idle. */
  synchronized boolean awaitIdle(long deadlineNanos) throws InterruptedException {
    while (!idle()) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /**
   * Keeps this new lane from running until {@code before} (the partition's lane of its last
   * assignment here, retired with a batch still running) is idle; then hands it to {@code submit}
   * if records arrived meanwhile. Order within the partition holds across the reassignment.
   */
  void holdUntil(Lane before, java.util.function.Consumer<Lane> submit) {
    synchronized (this) {
      scheduled = true;
    }
    before.whenIdle(
        () -> {
          if (release()) {
            submit.accept(this);
          }
        });
  }

  private synchronized boolean release() {
    if (!retired && !queue.isEmpty()) {
      return true;
    }
    scheduled = false;
    idleNow();
    return false;
  }

  /** Runs {@code action} once this retired lane is idle (at once if it is). */
  void whenIdle(Runnable action) {
    boolean now;
    synchronized (this) {
      now = idle();
      if (!now) {
        whenIdle = action;
      }
    }
    if (now) {
      action.run();
    }
  }

  private void idleNow() {
    if (retired) {
      queue.clear();
      retry = null;
    }
    notifyAll();
    Runnable a = whenIdle;
    whenIdle = null;
    if (a != null) {
      a.run(); // hands the successor lane to the executor: takes no lock of this lane
    }
  }
}
