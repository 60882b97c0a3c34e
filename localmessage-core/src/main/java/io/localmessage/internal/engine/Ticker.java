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
