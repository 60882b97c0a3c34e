package io.localmessage.spi;

import io.localmessage.MessageStatus;
import java.util.Objects;

/**
 * A version-checked write-back of one claimed message that keeps its row: to {@code status} ({@link
 * MessageStatus#PENDING} with {@code next_retry_at = now + delayMillis}, {@link
 * MessageStatus#SUCCEEDED} or {@link MessageStatus#DEAD}), recording {@code lastError} (null keeps
 * the previous one); {@code attemptsDelta} is {@code -1} when the delivery should not count. A
 * success that keeps no row is not a transition: it is {@link Dialect#deleteIfCurrent}.
 *
 * @param id the message
 * @param version the version the claim (or the last transition) left; the write matches only while
 *     the row still has it and is PENDING
 * @param status the new status: PENDING, SUCCEEDED or DEAD
 * @param delayMillis for PENDING: how long until it is due again; ignored otherwise
 * @param lastError the error to record, or {@code null}
 * @param attemptsDelta {@code 0}, or {@code -1} to give the attempt back
 * @param keepLease leave {@code next_retry_at} and {@code lease_owner} as they are: the execution's
 *     thread may still be inside the handler (a shutdown that gives the attempt back without
 *     letting anyone run the message before the current lease ends)
 */
public record Transition(
    long id,
    long version,
    MessageStatus status,
    long delayMillis,
    String lastError,
    int attemptsDelta,
    boolean keepLease) {

  /** Checks that {@code status} is one a delivery can end in. */
  public Transition {
    Objects.requireNonNull(status, "status");
    if (status == MessageStatus.CANCELED) {
      throw new IllegalArgumentException("only an operator cancels a message, not a write-back");
    }
  }

  /** A transition that moves the lease as usual ({@code keepLease} false). */
  public Transition(
      long id,
      long version,
      MessageStatus status,
      long delayMillis,
      String lastError,
      int attemptsDelta) {
    this(id, version, status, delayMillis, lastError, attemptsDelta, false);
  }
}
