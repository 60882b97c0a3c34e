package io.localmessage.spi;

/**
 * A version-checked write-back of one claimed ticket: to {@code status} ({@code 0} PENDING with
 * {@code next_retry_at = now + delayMillis}; {@code 1} SUCCEEDED; {@code 2} DEAD), recording {@code
 * lastError}; {@code attemptsDelta} is {@code -1} when the delivery should not count.
 */
public record Transition(
    long id, long version, int status, long delayMillis, String lastError, int attemptsDelta) {}
