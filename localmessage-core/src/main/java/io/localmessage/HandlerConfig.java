package io.localmessage;

import java.time.Duration;
import java.util.Objects;

/** Per-biz-type settings. Immutable; build with {@link #builder()}. */
public final class HandlerConfig {
  /** Deliveries before a message goes DEAD, unless configured. */
  public static final int DEFAULT_MAX_ATTEMPTS = 10;

  /** How long a handler may run before it is interrupted, unless configured. */
  public static final Duration DEFAULT_HANDLER_TIMEOUT = Duration.ofSeconds(30);

  /** Exponential from 1 s to 1 h with jitter 0.5, unless configured. */
  public static final Backoff DEFAULT_BACKOFF =
      Backoff.exponential(Duration.ofSeconds(1), Duration.ofHours(1)).jitter(0.5);

  /** Messages per {@link BatchHandler} call, unless configured. */
  public static final int DEFAULT_BATCH_SIZE = 100;

  /** The longest handler timeout accepted; longer work belongs in a job system, not a handler. */
  public static final Duration MAX_HANDLER_TIMEOUT = Duration.ofHours(1);

  private final int maxAttempts;
  private final int concurrency;
  private final Backoff backoff;
  private final Duration handlerTimeout;
  private final Duration maxAge;
  private final boolean ordered;
  private final Duration retainSucceeded;
  private final int batchSize;
  private final boolean retryAfterCountsAttempt;

  private HandlerConfig(Builder b) {
    this.maxAttempts = b.maxAttempts;
    this.concurrency = b.concurrency;
    this.backoff = b.backoff;
    this.handlerTimeout = b.handlerTimeout;
    this.maxAge = b.maxAge;
    this.ordered = b.ordered;
    this.retainSucceeded = b.retainSucceeded;
    this.batchSize = b.batchSize;
    this.retryAfterCountsAttempt = b.retryAfterCountsAttempt;
  }

  /** A builder with the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** The defaults: 10 attempts, exponential 1s..1h backoff with jitter, 30s timeout. */
  public static HandlerConfig defaults() {
    return builder().build();
  }

  /** Deliveries before a message goes DEAD. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** Messages of this type in flight at once on one replica; 0 means "up to the engine total". */
  public int concurrency() {
    return concurrency;
  }

  /** The wait after each retryable failure. */
  public Backoff backoff() {
    return backoff;
  }

  /** How long a handler may run before it is interrupted and its delivery counts as a timeout. */
  public Duration handlerTimeout() {
    return handlerTimeout;
  }

  /** Retries stop once a message is this old ({@code null}: no limit). */
  public Duration maxAge() {
    return maxAge;
  }

  /** Whether messages of one aggregate run strictly one after another in id order. */
  public boolean ordered() {
    return ordered;
  }

  /** How long a SUCCEEDED message is kept; {@code ZERO} deletes it at once. */
  public Duration retainSucceeded() {
    return retainSucceeded;
  }

  /** Messages per {@link BatchHandler} call; ignored for a plain {@link Handler}. */
  public int batchSize() {
    return batchSize;
  }

  /** Whether a {@link RetryAfter} outcome uses up an attempt. */
  public boolean retryAfterCountsAttempt() {
    return retryAfterCountsAttempt;
  }

  @Override
  public String toString() {
    return "HandlerConfig{maxAttempts="
        + maxAttempts
        + ", concurrency="
        + concurrency
        + ", backoff="
        + backoff
        + ", handlerTimeout="
        + handlerTimeout
        + ", maxAge="
        + maxAge
        + ", ordered="
        + ordered
        + ", retainSucceeded="
        + retainSucceeded
        + ", batchSize="
        + batchSize
        + ", retryAfterCountsAttempt="
        + retryAfterCountsAttempt
        + "}";
  }

  /** Builder; every setter checks its bounds at once. */
  public static final class Builder {
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private int concurrency = 0;
    private Backoff backoff = DEFAULT_BACKOFF;
    private Duration handlerTimeout = DEFAULT_HANDLER_TIMEOUT;
    private Duration maxAge;
    private boolean ordered;
    private Duration retainSucceeded = Duration.ZERO;
    private int batchSize = DEFAULT_BATCH_SIZE;
    private boolean retryAfterCountsAttempt;

    private Builder() {}

    /** Deliveries before the message goes DEAD; 1 to 1,000. */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1 || maxAttempts > 1000) {
        throw new IllegalArgumentException(
            "maxAttempts must be between 1 and 1000, was " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** Per-type in-flight cap on one replica, 1 to 10,000 (0: only the engine total applies). */
    public Builder concurrency(int concurrency) {
      if (concurrency < 0 || concurrency > 10_000) {
        throw new IllegalArgumentException(
            "concurrency must be between 0 and 10000, was " + concurrency);
      }
      this.concurrency = concurrency;
      return this;
    }

    /** The wait after each retryable failure (default {@link #DEFAULT_BACKOFF}). */
    public Builder backoff(Backoff backoff) {
      this.backoff = Objects.requireNonNull(backoff, "backoff");
      return this;
    }

    /** Positive and at most one hour; must fit in the engine's lease with the write-back margin. */
    public Builder handlerTimeout(Duration handlerTimeout) {
      Objects.requireNonNull(handlerTimeout, "handlerTimeout");
      if (handlerTimeout.isNegative()
          || handlerTimeout.isZero()
          || handlerTimeout.compareTo(MAX_HANDLER_TIMEOUT) > 0) {
        throw new IllegalArgumentException(
            "handlerTimeout must be positive and at most "
                + MAX_HANDLER_TIMEOUT
                + ", was "
                + handlerTimeout);
      }
      this.handlerTimeout = handlerTimeout;
      return this;
    }

    /** Positive, or {@code null} for no limit. */
    public Builder maxAge(Duration maxAge) {
      if (maxAge != null && (maxAge.isNegative() || maxAge.isZero())) {
        throw new IllegalArgumentException("maxAge must be positive or null, was " + maxAge);
      }
      if (maxAge != null && maxAge.compareTo(NewMessage.MAX_DELAY) > 0) {
        throw new IllegalArgumentException(
            "maxAge must be at most " + NewMessage.MAX_DELAY + " (100 years), was " + maxAge);
      }
      this.maxAge = maxAge;
      return this;
    }

    /**
     * Whether messages of one aggregate run strictly one after another, in id order (default
     * false). A DEAD message blocks the rest of its aggregate until an operator requeues or cancels
     * it. A save of an ordered type (or of a type this replica has not registered) locks its
     * aggregate until the saving transaction ends, so id order is the order the saves committed in
     * even when two transactions of one aggregate overlap (design 8.19).
     */
    public Builder ordered(boolean ordered) {
      this.ordered = ordered;
      return this;
    }

    /**
     * How long a SUCCEEDED message is kept before the retention purge deletes it (default {@code
     * ZERO}: deleted at once). Keeping it extends the duplicate window of its key by as long.
     */
    public Builder retainSucceeded(Duration retainSucceeded) {
      Objects.requireNonNull(retainSucceeded, "retainSucceeded");
      if (retainSucceeded.isNegative()) {
        throw new IllegalArgumentException(
            "retainSucceeded must not be negative, was " + retainSucceeded);
      }
      if (retainSucceeded.compareTo(NewMessage.MAX_DELAY) > 0) {
        throw new IllegalArgumentException(
            "retainSucceeded must be at most "
                + NewMessage.MAX_DELAY
                + " (100 years), was "
                + retainSucceeded);
      }
      this.retainSucceeded = retainSucceeded;
      return this;
    }

    /** 1 to 10,000 messages per {@link BatchHandler} call. */
    public Builder batchSize(int batchSize) {
      if (batchSize < 1 || batchSize > 10_000) {
        throw new IllegalArgumentException(
            "batchSize must be between 1 and 10000, was " + batchSize);
      }
      this.batchSize = batchSize;
      return this;
    }

    /** Whether a {@link RetryAfter} outcome uses up an attempt (default false). */
    public Builder retryAfterCountsAttempt(boolean counts) {
      this.retryAfterCountsAttempt = counts;
      return this;
    }

    /** The configuration. */
    public HandlerConfig build() {
      return new HandlerConfig(this);
    }
  }
}
