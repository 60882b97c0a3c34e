package io.localmessage.http;

import io.localmessage.Message;
import io.localmessage.http.internal.StandardClassifier;
import java.io.IOException;
import java.time.Duration;

/**
 * Decides what a response means for the message, in the terms of {@link io.localmessage.Handler}:
 * return normally for success, throw {@link io.localmessage.PermanentFailure} to dead-letter it,
 * {@link io.localmessage.RetryAfter} to come back at a given time, anything else to retry with the
 * type's backoff. Replace it to fit a service (e.g. treat 409 as "already done"), and delegate the
 * rest to {@link #standard()}:
 *
 * <pre>{@code
 * ResponseClassifier conflictIsDone = (m, r) -> {
 *   if (r.status() != 409) ResponseClassifier.standard().classify(m, r);
 * };
 * }</pre>
 */
@FunctionalInterface
public interface ResponseClassifier {

  /** The default cap on a {@code Retry-After} delay honoured by {@link #standard()}. */
  Duration DEFAULT_MAX_RETRY_AFTER = Duration.ofHours(1);

  /** Classifies a response that arrived. */
  void classify(Message message, DeliveryResponse response) throws Exception;

  /**
   * Classifies a delivery that got no response: connect or request timeout, connection refused or
   * reset. {@code target} is {@code METHOD scheme://host:port/path}. The default retries with the
   * type's backoff by throwing {@link HttpDeliveryException}.
   */
  default void classifyFailure(Message message, String target, IOException error) throws Exception {
    StandardClassifier.failure(target, error);
  }

  /**
   * The standard policy: 2xx success; 408, 425, 429 and 5xx except 501 and 505 retry, honouring
   * {@code Retry-After} (delta-seconds or HTTP-date, capped at {@link #DEFAULT_MAX_RETRY_AFTER}) by
   * throwing {@link io.localmessage.RetryAfter}, else by throwing {@link HttpDeliveryException} so
   * the backoff applies; a {@code Retry-After} of zero or in the past also falls back to the
   * backoff. Every other status (3xx — redirects are not followed —, other 4xx, 501, 505) is a
   * {@link io.localmessage.PermanentFailure} with the status and a redacted body excerpt.
   */
  static ResponseClassifier standard() {
    return StandardClassifier.DEFAULT;
  }

  /** {@link #standard()} with another cap on honoured {@code Retry-After} delays. */
  static ResponseClassifier standard(Duration maxRetryAfter) {
    return new StandardClassifier(maxRetryAfter);
  }
}
