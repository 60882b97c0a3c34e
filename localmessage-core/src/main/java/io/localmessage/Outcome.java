package io.localmessage;

import java.time.Duration;
import java.util.Objects;

/** The result of one message in a {@link BatchHandler} batch. */
public final class Outcome {
  /** The kinds of result. */
  public enum Type {
    /** The side effect happened. */
    SUCCESS,
    /** A retryable failure: the backoff applies. */
    RETRY,
    /** Not yet: due again after a given delay. */
    RETRY_AFTER,
    /** Trying again cannot help: DEAD. */
    PERMANENT
  }

  private static final Outcome SUCCESS = new Outcome(Type.SUCCESS, null, null);

  private final Type type;
  private final Duration delay;
  private final String error;

  private Outcome(Type type, Duration delay, String error) {
    this.type = type;
    this.delay = delay;
    this.error = error;
  }

  /** The side effect happened. */
  public static Outcome success() {
    return SUCCESS;
  }

  /** A retryable failure: the type's backoff applies. */
  public static Outcome retry(String error) {
    return new Outcome(Type.RETRY, null, Objects.requireNonNull(error, "error"));
  }

  /** A retryable failure described by {@code cause}. */
  public static Outcome retry(Throwable cause) {
    return retry(describe(cause));
  }

  /** Not yet: due again after {@code delay}. */
  public static Outcome retryAfter(Duration delay, String reason) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("retry delay must not be negative, was " + delay);
    }
    return new Outcome(Type.RETRY_AFTER, delay, reason == null ? "retry after " + delay : reason);
  }

  /** Trying again cannot help: the message goes DEAD. */
  public static Outcome permanent(String error) {
    return new Outcome(Type.PERMANENT, null, Objects.requireNonNull(error, "error"));
  }

  /** A permanent failure described by {@code cause}. */
  public static Outcome permanent(Throwable cause) {
    return permanent(describe(cause));
  }

  /** What kind of result this is. */
  public Type type() {
    return type;
  }

  /** For {@link Type#RETRY_AFTER}: the delay; otherwise {@code null}. */
  public Duration delay() {
    return delay;
  }

  /** The error summary recorded as {@code last_error}; {@code null} for success. */
  public String error() {
    return error;
  }

  /** {@code ClassName: message}, the usual one-line summary of an exception. */
  public static String describe(Throwable t) {
    String msg = t.getMessage();
    return msg == null ? t.getClass().getName() : t.getClass().getName() + ": " + msg;
  }

  @Override
  public String toString() {
    return type == Type.SUCCESS ? "SUCCESS" : type + "(" + error + ")";
  }
}
