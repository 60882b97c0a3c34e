package io.localmessage;

/**
 * Runs the side effect of one message. Outcomes:
 *
 * <ul>
 *   <li>return normally: success;
 *   <li>throw {@link PermanentFailure}: DEAD now;
 *   <li>throw {@link RetryAfter}: due again after its delay;
 *   <li>throw anything else: retried with the type's backoff until attempts or max age run out.
 * </ul>
 *
 * <p>Delivery is at least once: the same message can run again after a crash, a lease expiry or a
 * lost write-back. Handlers must be idempotent, keyed by {@link Message#idemKey()}. A handler that
 * overruns the type's handler timeout is interrupted and its outcome recorded as a retryable
 * timeout.
 */
@FunctionalInterface
public interface Handler {
  /** Runs the side effect of {@code message}; see the outcomes above. */
  void handle(Message message) throws Exception;
}
