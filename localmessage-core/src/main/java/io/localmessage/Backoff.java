package io.localmessage;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long to wait after the n-th failed attempt. Immutable; {@link #delayAfter(int)} is the only
 * operation the engine uses.
 */
public abstract class Backoff {
  private Backoff() {}

  /**
   * The delay after failed attempt {@code attempt} (1-based), with jitter applied. Never negative.
   */
  public abstract Duration delayAfter(int attempt);

  /**
   * {@code initial * 2^(attempt-1)}, capped at {@code max}, with full-range jitter 0.5 by default
   * (see {@link Exponential#jitter(double)}).
   */
  public static Exponential exponential(Duration initial, Duration max) {
    return new Exponential(initial, max, 2.0, 0.5);
  }

  /** The same delay after every failure, no jitter. */
  public static Backoff fixed(Duration delay) {
    requirePositive("fixed delay", delay);
    return new Backoff() {
      @Override
      public Duration delayAfter(int attempt) {
        return delay;
      }

      @Override
      public String toString() {
        return "fixed(" + delay + ")";
      }
    };
  }

  /**
   * An explicit rhythm: the n-th failure waits {@code delays[n-1]}; failures past the end repeat
   * the last delay, for example {@code schedule(1m, 5m, 30m, 2h, 12h, 24h)}.
   */
  public static Backoff schedule(Duration... delays) {
    Objects.requireNonNull(delays, "delays");
    if (delays.length == 0) {
      throw new IllegalArgumentException("a backoff schedule needs at least one delay");
    }
    List<Duration> list = List.copyOf(Arrays.asList(delays));
    list.forEach(d -> requirePositive("schedule delay", d));
    return new Backoff() {
      @Override
      public Duration delayAfter(int attempt) {
        return list.get(Math.min(Math.max(attempt, 1), list.size()) - 1);
      }

      @Override
      public String toString() {
        return "schedule" + list;
      }
    };
  }

  private static void requirePositive(String what, Duration d) {
    Objects.requireNonNull(d, what);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be positive, was " + d);
    }
    if (d.compareTo(NewMessage.MAX_DELAY) > 0) {
      throw new IllegalArgumentException(
          what + " must be at most " + NewMessage.MAX_DELAY + " (100 years), was " + d);
    }
  }

  /** Exponential backoff with jitter. */
  public static final class Exponential extends Backoff {
    private final Duration initial;
    private final Duration max;
    private final double multiplier;
    private final double jitter;

    private Exponential(Duration initial, Duration max, double multiplier, double jitter) {
      requirePositive("initial backoff", initial);
      requirePositive("max backoff", max);
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "max backoff " + max + " is shorter than the initial backoff " + initial);
      }
      if (!(multiplier >= 1.0) || multiplier > 100) {
        throw new IllegalArgumentException("multiplier must be in [1, 100], was " + multiplier);
      }
      if (!(jitter >= 0.0 && jitter <= 1.0)) {
        throw new IllegalArgumentException("jitter must be in [0, 1], was " + jitter);
      }
      this.initial = initial;
      this.max = max;
      this.multiplier = multiplier;
      this.jitter = jitter;
    }

    /**
     * Share of the delay that is randomised: the delay is drawn uniformly from {@code [d*(1-j),
     * d]}. 0 disables jitter; 1 is "full jitter". Jitter spreads the retries of messages that
     * failed together (a remote outage) so they do not come back as one burst.
     */
    public Exponential jitter(double jitter) {
      return new Exponential(initial, max, multiplier, jitter);
    }

    /** The growth factor per attempt, 1 to 100 (default 2): {@code initial * multiplier^(n-1)}. */
    public Exponential multiplier(double multiplier) {
      return new Exponential(initial, max, multiplier, jitter);
    }

    @Override
    public Duration delayAfter(int attempt) {
      double raw = initial.toMillis() * Math.pow(multiplier, Math.max(0, attempt - 1));
      double capped = Math.min(raw, (double) max.toMillis());
      double low = capped * (1.0 - jitter);
      double value = jitter == 0 ? capped : ThreadLocalRandom.current().nextDouble(low, capped + 1);
      return Duration.ofMillis((long) Math.min(value, (double) max.toMillis()));
    }

    @Override
    public String toString() {
      return "exponential("
          + initial
          + ".."
          + max
          + ", x"
          + multiplier
          + ", jitter "
          + jitter
          + ")";
    }
  }
}
