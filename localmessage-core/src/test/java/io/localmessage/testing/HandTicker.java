package io.localmessage.testing;

import io.localmessage.internal.engine.Ticker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An engine ticker a test moves forward by hand: it advances with the system clock from where it
 * starts and jumps by {@link #advance}, and asks the engine's waits to read it every few
 * milliseconds ({@link #waitSliceNanos()}), so a poll interval, a lease renewal, a handler timeout
 * or a shutdown timeout of an hour passes when the test says so instead of an hour later.
 */
public final class HandTicker implements Ticker {
  private static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final AtomicLong offset;

  private HandTicker(long start) {
    this.offset = new AtomicLong(start - System.nanoTime());
  }

  /** A ticker reading {@code start} now (any {@code long}: it wraps as {@code long} does). */
  public static HandTicker startingAt(long start) {
    return new HandTicker(start);
  }

  @Override
  public long nanos() {
    return System.nanoTime() + offset.get();
  }

  @Override
  public long waitSliceNanos() {
    return SLICE_NANOS;
  }

  /** Moves the reading forward by {@code by} at once. */
  public void advance(Duration by) {
    offset.addAndGet(by.toNanos());
  }
}
