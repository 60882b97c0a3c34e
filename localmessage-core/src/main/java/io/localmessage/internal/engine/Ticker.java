package io.localmessage.internal.engine;

/**
 * The engine's one source of interval time: a {@link System#nanoTime()}-like reading with an
 * arbitrary origin, compared only by differences ({@code a - b > 0}, never {@code a > b}), so
 * readings near either end of {@code long}, and readings that wrap from {@link Long#MAX_VALUE} to
 * {@link Long#MIN_VALUE} while the engine runs, time everything the same (design 8.17, 8.22). Lease
 * ends written to the database use the database clock, not this. Not API.
 */
@FunctionalInterface
public interface Ticker {
  /** The current reading in nanoseconds. */
  long nanos();

  /**
   * The longest a wait timed by this ticker blocks before it reads the ticker again. Unbounded for
   * a clock that advances only with time (a wait ends when its time is up, measured by the wait); a
   * test's ticker that it moves forward by hand returns a few milliseconds, so the engine's waits
   * (the poll interval, a retry's due time, the grace after a full claim) end soon after it moves
   * past their end, and a test advances time instead of sleeping through it.
   */
  default long waitSliceNanos() {
    return Long.MAX_VALUE;
  }

  /** {@link System#nanoTime()}. */
  Ticker SYSTEM = System::nanoTime;

  /**
   * {@link #SYSTEM} moved so that it reads {@code start} now and advances with it, wrapping past
   * {@link Long#MAX_VALUE} as {@code long} arithmetic does: how a test puts the engine near an end
   * of the clock.
   */
  static Ticker startingAt(long start) {
    long offset = start - System.nanoTime();
    return () -> System.nanoTime() + offset;
  }
}
