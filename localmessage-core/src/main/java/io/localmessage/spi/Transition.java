package io.localmessage.spi;

/**
 * A version-checked write-back of one claimed ticket: to {@code status} ({@code 0} PENDING with
 * {@code next_retry_at = now + delayMillis}; {@code 1} SUCCEEDED; {@code 2} DEAD), recording {@code
 * lastError}; {@code attemptsDelta} is {@code -1} when the delivery should not count.
 *
 * <p>{@code keepLease}: leave {@code next_retry_at} and {@code lease_owner} as they are. Used when
 * the execution's thread may still be inside the handler (a shutdown that gives the attempt back
 * without letting anyone run the ticket before the current lease ends).
 */
public record Transition(
    long id,
    long version,
    int status,
    long delayMillis,
    String lastError,
    int attemptsDelta,
    boolean keepLease) {

  public Transition(
      long id, long version, int status, long delayMillis, String lastError, int attemptsDelta) {
    this(id, version, status, delayMillis, lastError, attemptsDelta, false);
  }
}
