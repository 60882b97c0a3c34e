package io.localmessage.internal.engine;

import io.localmessage.EngineHealth;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;

/** What one background loop reports: its last successful iteration and its last error. */
final class LoopHealth {
  private final String name;
  private final Ticker ticker;
  private final Duration stuckAfter;
  private final BooleanSupplier alive;
  private final BooleanSupplier expected;
  private volatile long lastSuccessNanos;
  private volatile Instant lastSuccess;
  private volatile String lastError;

  LoopHealth(String name, Ticker ticker, Duration stuckAfter, BooleanSupplier alive) {
    this(name, ticker, stuckAfter, alive, () -> true);
  }

  /** {@code expected}: whether the loop should be running now (a poller before start is not). */
  LoopHealth(
      String name,
      Ticker ticker,
      Duration stuckAfter,
      BooleanSupplier alive,
      BooleanSupplier expected) {
    this.name = name;
    this.ticker = ticker;
    this.stuckAfter = stuckAfter;
    this.alive = alive;
    this.expected = expected;
    // a loop counts as fresh from its creation, so it is not stuck before its first iteration
    this.lastSuccessNanos = ticker.nanos();
  }

  void success() {
    lastSuccessNanos = ticker.nanos();
    lastSuccess = Instant.now();
  }

  void failure(Throwable t) {
    lastError = t.getCause() == null ? t.toString() : t.toString() + " / " + t.getCause();
  }

  EngineHealth.Loop snapshot() {
    boolean stuck =
        expected.getAsBoolean()
            && (!alive.getAsBoolean() || ticker.nanos() - lastSuccessNanos > stuckAfter.toNanos());
    return new EngineHealth.Loop(name, lastSuccess, stuckAfter, stuck, lastError);
  }
}
