package io.localmessage;

import java.util.List;

/**
 * Runs up to {@link HandlerConfig#batchSize()} messages of one type at once and returns an outcome
 * per message, in the order of the input list. A thrown exception applies to every message of the
 * batch as a retryable failure ({@link PermanentFailure}: all dead; {@link RetryAfter}: all
 * postponed). A missing or {@code null} outcome counts as a retryable failure.
 */
@FunctionalInterface
public interface BatchHandler {
  /** Delivers {@code messages} and returns one outcome per message, in their order. */
  List<Outcome> handle(List<Message> messages) throws Exception;
}
