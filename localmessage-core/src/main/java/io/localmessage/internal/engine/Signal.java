package io.localmessage.internal.engine;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/** Wakes the poller: set by whatever makes a claim worth trying now, consumed by its wait. */
final class Signal {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition signalled = lock.newCondition();
  private boolean set;

  void signal() {
    lock.lock();
    try {
      set = true;
      signalled.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Waits until signalled, at most {@code max}, while {@code running}; clears the signal. */
  void await(Duration max, BooleanSupplier running) {
    lock.lock();
    try {
      long nanos = max.toNanos();
      while (!set && nanos > 0 && running.getAsBoolean()) {
        nanos = signalled.awaitNanos(nanos);
      }
      set = false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
  }
}
