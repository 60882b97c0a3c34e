package io.localmessage;

import java.util.concurrent.CompletionStage;

/**
 * Runs the side effect of one message without holding a thread while it waits: the handler starts
 * the work (an HTTP call with the JDK client's {@code sendAsync}, a Kafka send, a reactive driver
 * call) and returns a stage that completes when the effect is done. Register it with {@link
 * LocalMessages#registerAsync}; {@link LocalMessagesBuilder#concurrency(int)} then bounds the
 * messages in flight, not threads, so thousands can wait at once on a few threads.
 *
 * <p>The outcome rules are those of {@link Handler}, applied to how the stage completes: normally
 * is a success; exceptionally with {@link PermanentFailure} is DEAD now, with {@link RetryAfter}
 * due again after its delay, with anything else retried with the type's backoff ({@link
 * java.util.concurrent.CompletionException} and {@link java.util.concurrent.ExecutionException}
 * wrappers are looked through). An exception thrown by {@code handleAsync} itself, or a {@code
 * null} stage, is an outcome too.
 *
 * <p>Timeouts and leases: the type's handler timeout runs from the call to the stage's completion,
 * and the lease is renewed while the stage is pending. A stage still pending at its timeout is
 * cancelled (best effort: its work may already be under way elsewhere), its slot is freed and its
 * late completion is ignored; because its effect may still happen, the message is not due again
 * before its current lease ends, and the timeout counts as a failed attempt. The same holds at
 * {@link LocalMessages#close()} for a stage still pending after the shutdown timeout, except that
 * the attempt is given back.
 *
 * <p>{@code handleAsync} is called on one of a few engine threads and must return quickly: do
 * blocking work in a {@link Handler} (on platform or virtual threads, see {@link
 * LocalMessagesBuilder#virtualThreads(boolean)}). The stage may complete on any thread; the engine
 * only records the outcome there.
 */
@FunctionalInterface
public interface AsyncHandler {
  /** Starts the side effect of {@code message}; the stage completes when it is done. */
  CompletionStage<Void> handleAsync(Message message) throws Exception;
}
