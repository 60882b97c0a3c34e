package io.localmessage;

import java.time.Duration;
import java.util.Objects;

/**
 * Thrown by a handler to say "not yet": the outcome is unknown or the remote side asked us to come
 * back later (HTTP {@code Retry-After}, a payment still processing). The message becomes due again
 * after {@link #delay()}. By default this does not use up an attempt; see {@link
 * HandlerConfig.Builder#retryAfterCountsAttempt(boolean)}.
 */
public class RetryAfter extends Exception {
  private static final long serialVersionUID = 1L;

  private final Duration delay;

  /**
   * Not yet: due again after {@code delay} (not negative); {@code reason} is recorded as the last
   * error. A delay longer than {@link NewMessage#MAX_DELAY} (100 years, e.g. {@code
   * ChronoUnit.FOREVER}) is that long: still a "not yet", as late as a message can be due.
   */
  public RetryAfter(Duration delay, String reason) {
    super(reason);
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("RetryAfter delay must not be negative, was " + delay);
    }
    this.delay = delay.compareTo(NewMessage.MAX_DELAY) > 0 ? NewMessage.MAX_DELAY : delay;
  }

  /** How long to wait before the next try. */
  public Duration delay() {
    return delay;
  }
}
