package io.localmessage.testing;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * The two waits a test needs besides "until something happens", written so that a loaded machine
 * (the test command's two builds side by side, another process on a core) makes them slower, never
 * wrong: a deadline here only stops a hung test.
 */
public final class Waits {
  /** What a wait may take beyond its own length before the test is taken for hung. */
  static final Duration HUNG = Duration.ofSeconds(20);

  private Waits() {}

  /**
   * Asserts that {@code condition} is true at every check for {@code length}, and fails at the
   * first check that finds it false. Awaitility's {@code during} alone would wait for the condition
   * to hold again after it failed, up to its deadline, so a deadline generous enough for a loaded
   * machine would let a condition that was false for a moment pass.
   */
  public static void holds(String what, Duration length, Callable<Boolean> condition) {
    await(what)
        .during(length)
        .atMost(length.plus(HUNG))
        .failFast(what + ": stopped holding", () -> !condition.call())
        .until(condition);
  }

  /**
   * Lets {@code length} of wall time pass, for a rate or a count measured over it, and returns how
   * long really passed: more than {@code length} on a loaded machine, and bounds on what was
   * counted meanwhile must follow the time that passed, not the time asked for. Nothing waits for
   * an event here; use it only where the test measures time itself.
   */
  public static Duration window(Duration length) {
    long start = System.nanoTime();
    await().pollDelay(length).atMost(length.plus(HUNG)).until(() -> true);
    return Duration.ofNanos(System.nanoTime() - start);
  }
}
