package io.localmessage.internal.engine;

import java.util.concurrent.Semaphore;

/**
 * The execution slots of this replica: one total and one per registered type. A claim reserves
 * slots before it asks the database, so the replica never claims more messages than it can start
 * right now; every reserved slot is given back on every path.
 */
final class Slots {
  private final Semaphore total;
  private final int concurrency;
  private final int wakeThreshold;
  private final Signal signal;
  private volatile boolean starved;

  Slots(int concurrency, Signal signal) {
    this.total = new Semaphore(concurrency);
    this.concurrency = concurrency;
    // after a full batch the next claim waits until half the slots are free (or a poll interval
    // passed): fewer, fuller claims instead of one small claim per finished message
    this.wakeThreshold = Math.max(1, concurrency / 2);
    this.signal = signal;
  }

  int available() {
    return total.availablePermits();
  }

  boolean allFree() {
    return total.availablePermits() >= concurrency;
  }

  /** Whether fewer than half the slots are free: a full claim waits for more. */
  boolean belowWakeThreshold() {
    return total.availablePermits() < wakeThreshold;
  }

  /** Reserves {@code n} slots of {@code reg} and of the total, both or neither. */
  boolean tryReserve(Registration reg, int n) {
    if (n <= 0 || !total.tryAcquire(n)) {
      return false;
    }
    if (!reg.slots.tryAcquire(n)) {
      total.release(n);
      return false;
    }
    return true;
  }

  /** Gives back {@code n} reserved slots that no execution used. */
  void release(Registration reg, int n) {
    reg.slots.release(n);
    total.release(n);
  }

  /**
   * An execution left: gives its slots back and, when the last claim found no free slot or came
   * back full, wakes the poller once half the slots are free.
   */
  void finished(Registration reg, int n) {
    release(reg, n);
    if (starved && total.availablePermits() >= wakeThreshold) {
      signal.signal();
    }
  }

  boolean starved() {
    return starved;
  }

  void starved(boolean starved) {
    this.starved = starved;
  }
}
