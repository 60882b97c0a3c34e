package io.localmessage.internal;

import io.localmessage.Message;
import io.localmessage.Outcome;
import io.localmessage.PermanentFailure;
import io.localmessage.RetryAfter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One handler call on a worker thread: a single ticket, or a chunk for a batch handler. Exactly one
 * outcome is decided per call — by the handler, or by the timeout, which also interrupts the
 * handler. The slots are given back only when the thread really leaves the handler, so a handler
 * that ignores interrupts keeps its slot and nothing queues behind it (invariant 5).
 */
final class Execution implements Runnable {
  final Registration registration;
  final List<ClaimedMessage> messages;

  /** Completes when the outcome has been written back (or dropped by a halt). */
  final CompletableFuture<Void> written = new CompletableFuture<>();

  private final AtomicBoolean decided = new AtomicBoolean();
  private volatile long deadlineNanos;
  private final Consumer<Execution> onFinished;
  private final OutcomeSink sink;
  private Thread thread;
  private boolean finished;
  private long startNanos;

  /** Receives the decided outcomes. */
  interface OutcomeSink {
    void accept(Execution execution, List<Outcome> outcomes, boolean timedOut, Duration took);
  }

  Execution(
      Registration registration,
      List<ClaimedMessage> messages,
      OutcomeSink sink,
      Consumer<Execution> onFinished) {
    this.registration = registration;
    this.messages = messages;
    this.sink = sink;
    this.onFinished = onFinished;
  }

  @Override
  public void run() {
    try {
      synchronized (this) {
        thread = Thread.currentThread();
        startNanos = System.nanoTime();
      }
      deadlineNanos = startNanos + registration.config.handlerTimeout().toNanos();
      List<Outcome> outcomes = invoke();
      if (decided.compareAndSet(false, true)) {
        sink.accept(this, outcomes, false, elapsed());
      }
    } finally {
      synchronized (this) {
        finished = true;
      }
      // an interrupt meant for this handler must not leak into the next task of the thread
      Thread.interrupted();
      onFinished.accept(this);
    }
  }

  /** Whether the handler has run past its timeout at {@code now} (a {@code System.nanoTime()}). */
  boolean overdue(long now) {
    long d = deadlineNanos;
    return d != 0 && now - d >= 0;
  }

  private List<Outcome> invoke() {
    List<Message> batch = Collections.unmodifiableList(messages);
    try {
      if (registration.isBatch()) {
        List<Outcome> result = registration.batchHandler.handle(batch);
        List<Outcome> outcomes = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
          Outcome o = result != null && i < result.size() ? result.get(i) : null;
          outcomes.add(o != null ? o : Outcome.retry("batch handler returned no outcome"));
        }
        return outcomes;
      }
      registration.handler.handle(messages.get(0));
      return List.of(Outcome.success());
    } catch (PermanentFailure e) {
      return same(Outcome.permanent(Outcome.describe(e)));
    } catch (RetryAfter e) {
      return same(Outcome.retryAfter(e.delay(), e.getMessage()));
    } catch (Exception | LinkageError | AssertionError | StackOverflowError e) {
      return same(Outcome.retry(e));
    }
  }

  private List<Outcome> same(Outcome o) {
    return Collections.nCopies(messages.size(), o);
  }

  /** Records the timeout outcome (once) and interrupts the handler if it is still running. */
  void timeOut() {
    if (!decided.compareAndSet(false, true)) {
      return;
    }
    sink.accept(this, same(Outcome.retry("timeout")), true, elapsed());
    synchronized (this) {
      if (!finished && thread != null) {
        thread.interrupt();
      }
    }
  }

  /** Claims the right to decide, so no outcome is written later (shutdown, halt). */
  boolean abandon() {
    return decided.compareAndSet(false, true);
  }

  private synchronized Duration elapsed() {
    return Duration.ofNanos(System.nanoTime() - startNanos);
  }
}
