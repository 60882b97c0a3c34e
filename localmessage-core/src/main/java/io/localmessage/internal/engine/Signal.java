package io.localmessage.internal.engine;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/** Wakes the poller: set by whatever makes a claim worth trying now, consumed by its wait. */
final class Signal {
  private final Ticker ticker;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition signalled = lock.newCondition();
  private boolean set;

  Signal(Ticker ticker) {
    this.ticker = ticker;
  }

  void signal() {
    lock.lock();
    try {
      set = true;
      signalled.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until signalled, at most {@code max} on the engine's ticker, while {@code running};
   * clears the signal.
   */
  void await(Duration max, BooleanSupplier running) {
    lock.lock();
    try {
      long nanos = max.toNanos();
      long deadline = ticker.nanos() + nanos;
      while (!set && nanos > 0 && running.getAsBoolean()) {
        signalled.awaitNanos(Math.min(nanos, ticker.waitSliceNanos()));
        nanos = deadline - ticker.nanos();
      }
      set = false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
  }
}
