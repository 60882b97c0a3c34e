package io.localmessage.test;

import io.localmessage.LocalMessages;
import java.util.Objects;

/**
 * Runs due messages synchronously, on the calling thread's schedule: a test saves, drains, then
 * asserts on the handler's effects, without starting the engine's poller and without waiting.
 */
public final class Drain {
  /** The most claim rounds {@link #all(LocalMessages)} runs before it gives up. */
  public static final int DEFAULT_MAX_ROUNDS = 1000;

  private Drain() {}

  /**
   * Runs claim rounds ({@link LocalMessages#runOnce()}) until one finds nothing due, and returns
   * how many deliveries ran. Each round waits for its outcomes to be written. A retry scheduled for
   * later (backoff, {@code RetryAfter}) is not due yet and is not run; a message whose handler
   * keeps asking to run at once is run at most {@link #DEFAULT_MAX_ROUNDS} times.
   *
   * @throws IllegalStateException when messages were still due after that many rounds
   */
  public static int all(LocalMessages engine) {
    return all(engine, DEFAULT_MAX_ROUNDS);
  }

  /** {@link #all(LocalMessages)} with at most {@code maxRounds} claim rounds (at least 1). */
  public static int all(LocalMessages engine, int maxRounds) {
    Objects.requireNonNull(engine, "engine");
    if (maxRounds < 1) {
      throw new IllegalArgumentException("maxRounds must be at least 1, was " + maxRounds);
    }
    int total = 0;
    for (int round = 0; round < maxRounds; round++) {
      int n = engine.runOnce();
      if (n == 0) {
        return total;
      }
      total += n;
    }
    throw new IllegalStateException(
        "messages were still due after "
            + maxRounds
            + " claim rounds ("
            + total
            + " deliveries): a handler that never finishes its work?");
  }
}
