package io.localmessage.http.internal;

import io.localmessage.Message;
import io.localmessage.PermanentFailure;
import io.localmessage.RetryAfter;
import io.localmessage.http.DeliveryResponse;
import io.localmessage.http.HttpDeliveryException;
import io.localmessage.http.ResponseClassifier;
import java.io.IOException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/** The policy of {@link ResponseClassifier#standard()}. Not API. */
public final class StandardClassifier implements ResponseClassifier {
  public static final StandardClassifier DEFAULT =
      new StandardClassifier(ResponseClassifier.DEFAULT_MAX_RETRY_AFTER);

  private final Duration maxRetryAfter;

  public StandardClassifier(Duration maxRetryAfter) {
    Objects.requireNonNull(maxRetryAfter, "maxRetryAfter");
    if (maxRetryAfter.isNegative() || maxRetryAfter.isZero()) {
      throw new IllegalArgumentException("maxRetryAfter must be positive, was " + maxRetryAfter);
    }
    this.maxRetryAfter = maxRetryAfter;
  }

  /** Whether {@code status} is worth another try by this policy. */
  public static boolean retryable(int status) {
    return switch (status) {
      case 408, 425, 429 -> true;
      case 501, 505 -> false; // the server will not do it, however often we ask
      default -> status >= 500 && status <= 599;
    };
  }

  @Override
  public void classify(Message message, DeliveryResponse r) throws Exception {
    int status = r.status();
    if (status >= 200 && status <= 299) {
      return;
    }
    String summary = summary(r);
    if (retryable(status)) {
      Optional<String> header = r.header("Retry-After");
      if (header.isPresent()) {
        Optional<Duration> delay = RetryAfterHeader.parse(header.get(), Instant.now());
        if (delay.isPresent() && delay.get().compareTo(Duration.ZERO) > 0) {
          Duration d = delay.get().compareTo(maxRetryAfter) > 0 ? maxRetryAfter : delay.get();
          throw new RetryAfter(d, summary + " (Retry-After: " + header.get().trim() + ")");
        }
      }
      throw new HttpDeliveryException(status, summary);
    }
    if (status >= 300 && status <= 399) {
      String location = r.header("Location").map(StandardClassifier::safeLocation).orElse("none");
      throw new PermanentFailure(summary + " (redirect to " + location + " not followed)");
    }
    throw new PermanentFailure(summary);
  }

  /** Retries every transport failure with the backoff, saying what kind it was. */
  public static void failure(String target, IOException error) throws HttpDeliveryException {
    String kind;
    if (error instanceof HttpConnectTimeoutException) {
      kind = "connect timed out";
    } else if (error instanceof HttpTimeoutException) {
      kind = "request timed out";
    } else {
      kind = "failed";
    }
    throw new HttpDeliveryException(
        target + " " + kind + ": " + io.localmessage.Outcome.describe(error), error);
  }

  private static String safeLocation(String location) {
    try {
      return Redaction.safeUrl(java.net.URI.create(location.trim()));
    } catch (IllegalArgumentException e) {
      return "(unparseable Location)";
    }
  }

  private static String summary(DeliveryResponse r) {
    String excerpt = r.bodyExcerpt();
    String base = "HTTP " + r.status() + " from " + r.target();
    return excerpt.isEmpty() ? base : base + ": " + excerpt;
  }
}
