package io.localmessage.internal.engine;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The execution slots of this replica: one total and one per registered type. A claim reserves
 * slots before it asks the database, so the replica never claims more messages than it can start
 * right now; every reserved slot is given back on every path.
 */
final class Slots {
  private final Semaphore total;
  private final int concurrency;
  private final int fullClaimWake;
  private final int slowHandlerWake;
  private volatile long claimNanos;
  private final Signal signal;
  private volatile boolean starved;
  // executions that gave their slots back so far: the poller compares it across a wait to tell
  // slots that came back from slots that were free all along
  private final AtomicLong freed = new AtomicLong();

  Slots(int concurrency, Signal signal) {
    this.total = new Semaphore(concurrency);
    this.concurrency = concurrency;
    // after a full batch the next claim waits until half the slots are free (an eighth for slow
    // handlers, see wakeThreshold) or a poll interval passed: fewer, fuller claims instead of one
    // small claim per finished message
    this.fullClaimWake = Math.max(1, concurrency / 2);
    this.slowHandlerWake = Math.max(1, concurrency / 8);
    this.signal = signal;
  }

  int available() {
    return total.availablePermits();
  }

  boolean allFree() {
    return total.availablePermits() >= concurrency;
  }

  /** The last claim round took {@code nanos}: slow handlers are judged against it. */
  void claimTook(long nanos) {
    this.claimNanos = nanos;
  }

  /**
   * How many free slots wake the poller after a full claim, given how long handler calls take
   * lately against the last claim. Handlers about as short as a claim or shorter: half the slots,
   * as they free in a burst and one claim refills them. Handlers much longer (a call to another
   * service): waiting for half the slots would leave a freed slot idle for a quarter of a handler
   * call on average, half the replica's slots empty at full load; then an eighth of them, or what
   * frees while one claim runs if that is more, keeps the slots about 90% busy for at most eight
   * claims per handler duration.
   */
  int wakeThreshold(long handlerNanos) {
    long claim = claimNanos;
    if (claim <= 0 || handlerNanos <= 0) {
      return fullClaimWake;
    }
    // handlers up to twice a claim free at least half the slots during one claim: the cap below
    // makes that half, no separate case needed
    long freedDuringClaim = (concurrency * claim + handlerNanos - 1) / handlerNanos;
    return (int) Math.min(fullClaimWake, Math.max(slowHandlerWake, freedDuringClaim));
  }

  /** Whether fewer than the wake threshold of slots are free: a full claim waits for more. */
  boolean belowWakeThreshold(long handlerNanos) {
    return total.availablePermits() < wakeThreshold(handlerNanos);
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
   * An execution left: gives its slots back and, when the last claim found messages or no free
   * slot, wakes the poller once the wake threshold of slots is free.
   */
  void finished(Registration reg, int n, long handlerNanos) {
    release(reg, n);
    freed.incrementAndGet();
    if (starved && total.availablePermits() >= wakeThreshold(handlerNanos)) {
      signal.signal();
    }
  }

  boolean starved() {
    return starved;
  }

  /** How many executions have given their slots back so far. */
  long freedCount() {
    return freed.get();
  }

  void starved(boolean starved) {
    this.starved = starved;
  }
}
