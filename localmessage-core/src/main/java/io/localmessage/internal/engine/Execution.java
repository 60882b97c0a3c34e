package io.localmessage.internal.engine;

import io.localmessage.Message;
import io.localmessage.Outcome;
import io.localmessage.PermanentFailure;
import io.localmessage.RetryAfter;
import io.localmessage.spi.TracePropagation;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One handler call on a worker thread: a single message, or a chunk for a batch handler; or one
 * call of an asynchronous handler, which leaves its thread at once and stays pending until its
 * stage completes.
 *
 * <p>The outcome is handed to {@link Outcomes} only when the thread has left the handler, never
 * earlier: a timeout or a shutdown only interrupts the thread and marks how it ended, so no
 * write-back can make the message due while this execution may still be running it. An execution
 * the engine gave up on ({@link #abandonIfInside()}, {@link #abandon()}) hands nothing on when its
 * thread finally leaves. The slots are given back when the thread leaves (by {@link Executions},
 * which runs it), so a handler that ignores interrupts keeps its slot and nothing queues behind it.
 *
 * <p>An asynchronous execution gives its slots back when its stage completes, when its timeout
 * expires it (the stage is cancelled and its late completion ignored; the message stays leased
 * until its lease ends, because the stage's effect may still happen) or when a shutdown gives up on
 * it. Until then it counts as inside: its lease is renewed and a shutdown waits for it.
 */
final class Execution implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Execution.class);

  /** How the thread left the handler: decides what the outcome means. */
  enum Ending {
    /** The handler's own outcome. */
    NORMAL,
    /** The timeout fired while the handler ran: a retryable timeout, whatever it returned. */
    TIMED_OUT,
    /** Interrupted by shutdown: a success stands, anything else gives the attempt back. */
    SHUTDOWN,
    /**
     * The timeout expired an asynchronous stage still pending: a retryable timeout whose message is
     * not due before its current lease ends, since the stage's effect may still be under way.
     */
    TIMED_OUT_PENDING;

    boolean timedOut() {
      return this == TIMED_OUT || this == TIMED_OUT_PENDING;
    }
  }

  private enum State {
    NEW,
    INSIDE,
    /** An asynchronous handler returned its stage: no thread inside, the effect still running. */
    PENDING,
    LEFT,
    ABANDONED
  }

  final Registration registration;
  final List<ClaimedMessage> messages;

  /** Completes when the outcome has been written back, dropped or abandoned. */
  final CompletableFuture<Void> written = new CompletableFuture<>();

  private final Outcomes outcomes;
  private final Ticker ticker;
  private final TracePropagation tracing;
  private final Consumer<Execution> onFinished;
  private final AtomicBoolean finished = new AtomicBoolean();
  private State state = State.NEW; // guarded by this
  private CompletionStage<Void> stage; // guarded by this; while PENDING
  private HandlerScope scope; // the span of an asynchronous execution, ended when it leaves
  private boolean timedOut; // guarded by this
  private boolean shutdownInterrupted; // guarded by this
  private boolean capReported; // guarded by this
  private Thread thread; // guarded by this
  private volatile long startNanos;
  private volatile long deadlineNanos;
  // set after deadlineNanos: a reader that sees it sees the deadline (no reading is a sentinel)
  private volatile boolean deadlineSet;

  Execution(
      Registration registration,
      List<ClaimedMessage> messages,
      Outcomes outcomes,
      TracePropagation tracing,
      Ticker ticker,
      Consumer<Execution> onFinished) {
    this.ticker = ticker;
    this.registration = registration;
    this.messages = messages;
    this.outcomes = outcomes;
    this.tracing = tracing;
    this.onFinished = onFinished;
  }

  /**
   * Runs the handler on the calling thread. When it returns, the execution is over (its slots are
   * given back) unless an asynchronous handler left a pending stage behind.
   */
  @Override
  public void run() {
    boolean pending = false;
    try {
      synchronized (this) {
        if (state != State.NEW) {
          written.complete(null);
          return;
        }
        state = State.INSIDE;
        thread = Thread.currentThread();
        startNanos = ticker.nanos();
        deadlineNanos = startNanos + registration.config.handlerTimeout().toNanos();
        deadlineSet = true;
      }
      // the handler runs in its message's trace and MDC; both are gone before the outcome moves on
      HandlerScope scope =
          HandlerScope.start(tracing, registration.bizType, messages, registration.isBatch());
      if (registration.isAsync()) {
        pending = startAsync(scope);
        return;
      }
      List<Outcome> result;
      try (TracePropagation.Scope inside = scope.enter()) {
        result = invoke();
      }
      leave(result, scope);
    } finally {
      Thread.interrupted();
      if (!pending) {
        finish();
      }
    }
  }

  /** The thread left the handler with {@code result}: how it ended decides what it means. */
  private void leave(List<Outcome> result, HandlerScope scope) {
    Ending ending;
    synchronized (this) {
      if (state == State.ABANDONED) {
        ending = null;
      } else {
        state = State.LEFT;
        ending =
            timedOut ? Ending.TIMED_OUT : shutdownInterrupted ? Ending.SHUTDOWN : Ending.NORMAL;
      }
    }
    // an interrupt meant for this handler must not leak into the rest of this thread's work
    Thread.interrupted();
    decided(scope, result, ending);
  }

  /** Ends the span and hands the outcome on ({@code ending} null: abandoned, nothing to write). */
  private void decided(HandlerScope scope, List<Outcome> result, Ending ending) {
    scope.end(result, ending);
    if (ending == null) {
      written.complete(null);
      return;
    }
    try {
      outcomes.decided(this, result, ending, Duration.ofNanos(ticker.nanos() - startNanos));
    } catch (Throwable t) {
      // the messages stay leased and run again when the lease ends; the slot must not leak
      log.error(
          "event=outcome_routing_failed biz_type={} ids={} error={}",
          registration.bizType,
          ids(),
          t.toString());
      written.complete(null);
    }
  }

  /** Gives the slots back and leaves the in-flight set, once. */
  private void finish() {
    if (finished.compareAndSet(false, true)) {
      onFinished.accept(this);
    }
  }

  /**
   * Calls the asynchronous handler. Returns whether its stage is pending: then the execution ends
   * when the stage completes, times out or is given up on, not when this thread returns.
   */
  private boolean startAsync(HandlerScope scope) {
    CompletionStage<Void> started = null;
    List<Outcome> immediate = null;
    try (TracePropagation.Scope inside = scope.enter()) {
      started = registration.asyncHandler.handleAsync(messages.get(0));
      if (started == null) {
        immediate = List.of(Outcome.retry("asynchronous handler returned no stage"));
      }
    } catch (Throwable e) {
      immediate = List.of(outcomeOf(e));
    }
    if (immediate != null) {
      leave(immediate, scope);
      return false;
    }
    boolean timedOutInside;
    synchronized (this) {
      if (state != State.INSIDE) {
        // given up on (halt) while the call ran: nothing is written, the stage is not waited for
        cancel(started);
        written.complete(null);
        return false;
      }
      state = State.PENDING;
      thread = null;
      stage = started;
      this.scope = scope;
      timedOutInside = timedOut;
    }
    Thread.interrupted();
    if (timedOutInside) {
      // the timeout fired while the call itself ran: the stage is expired at once
      expirePending();
      return true;
    }
    started.whenComplete((ignored, error) -> completed(error));
    return true;
  }

  /** The stage completed: its outcome, unless the timeout or a shutdown already ended it. */
  private void completed(Throwable error) {
    HandlerScope s;
    synchronized (this) {
      if (state != State.PENDING) {
        log.debug(
            "event=late_completion_ignored biz_type={} ids={} state={}",
            registration.bizType,
            ids(),
            state);
        return;
      }
      state = State.LEFT;
      s = scope;
    }
    try {
      decided(
          s, List.of(error == null ? Outcome.success() : outcomeOf(unwrap(error))), Ending.NORMAL);
    } finally {
      finish();
    }
  }

  /**
   * The timeout expired a pending stage: it is cancelled, its late completion ignored, and a
   * timeout written that keeps the message leased until its lease ends. Returns true the first
   * time.
   */
  boolean expirePending() {
    CompletionStage<Void> s;
    HandlerScope sc;
    synchronized (this) {
      if (state != State.PENDING) {
        return false;
      }
      state = State.LEFT;
      timedOut = true;
      s = stage;
      sc = scope;
    }
    cancel(s);
    try {
      decided(sc, same(Outcome.retry("timed out")), Ending.TIMED_OUT_PENDING);
    } finally {
      finish();
    }
    return true;
  }

  private static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof java.util.concurrent.CompletionException
            || e instanceof java.util.concurrent.ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  /** Asks the stage's producer to stop; a stage that cannot be cancelled is left to run. */
  private static void cancel(CompletionStage<Void> s) {
    try {
      s.toCompletableFuture().cancel(true);
    } catch (RuntimeException ignored) {
      // toCompletableFuture is optional for a CompletionStage: the stage runs on, ignored
    }
  }

  private List<Outcome> invoke() {
    List<Message> batch = Collections.unmodifiableList(messages);
    try {
      if (registration.isBatch()) {
        List<Outcome> result = registration.batchHandler.handle(batch);
        Outcome[] each = new Outcome[messages.size()];
        for (int i = 0; i < each.length; i++) {
          Outcome o = result != null && i < result.size() ? result.get(i) : null;
          each[i] = o != null ? o : Outcome.retry("batch handler returned no outcome");
        }
        return Arrays.asList(each);
      }
      registration.handler.handle(messages.get(0));
      return List.of(Outcome.success());
    } catch (Throwable e) {
      return same(outcomeOf(e));
    }
  }

  /** The outcome a handler's throwable means. */
  private Outcome outcomeOf(Throwable e) {
    if (e instanceof PermanentFailure) {
      return Outcome.permanent(Outcome.describe(e));
    }
    if (e instanceof RetryAfter r) {
      return Outcome.retryAfter(r.delay(), r.getMessage());
    }
    // every throwable is an outcome: an Error thrown by a handler must not kill the worker or
    // leave the message waiting a whole lease without a last_error
    if (e instanceof VirtualMachineError) {
      log.error(
          "event=handler_vm_error biz_type={} ids={} error={}",
          registration.bizType,
          ids(),
          e.toString());
    }
    return Outcome.retry(e);
  }

  private List<Outcome> same(Outcome o) {
    return Collections.nCopies(messages.size(), o);
  }

  /**
   * Whether the handler has run past its timeout at {@code now} (a reading of the engine's ticker).
   */
  boolean overdue(long now) {
    return deadlineSet && now - deadlineNanos >= 0;
  }

  /**
   * The timeout fired: interrupts the handler and marks the outcome as a timeout. Writes nothing:
   * the outcome is written when the thread leaves. Returns true the first time.
   */
  synchronized boolean timeOut() {
    if (state != State.INSIDE || timedOut) {
      return false;
    }
    timedOut = true;
    thread.interrupt();
    return true;
  }

  /** Shutdown gave up waiting: interrupt, and give the attempt back unless the handler succeeds. */
  synchronized void interruptForShutdown() {
    if (state == State.INSIDE) {
      shutdownInterrupted = true;
      thread.interrupt();
    }
  }

  /** A renewal found every message of this execution taken over: stop the handler's work. */
  void interruptFenced() {
    CompletionStage<Void> s = null;
    synchronized (this) {
      if (state == State.INSIDE) {
        thread.interrupt();
      } else if (state == State.PENDING) {
        s = stage; // cancelled outside the lock: the completion it triggers takes the lock
      }
    }
    if (s != null) {
      cancel(s);
    }
  }

  /**
   * Gives up on an execution whose thread is still inside the handler: nothing will be written when
   * it leaves. Returns whether it was inside.
   */
  boolean abandonIfInside() {
    CompletionStage<Void> s;
    HandlerScope sc;
    synchronized (this) {
      if (state != State.INSIDE && state != State.PENDING) {
        return false;
      }
      boolean wasPending = state == State.PENDING;
      state = State.ABANDONED;
      if (!wasPending) {
        return true;
      }
      s = stage;
      sc = scope;
    }
    // no thread will leave this one: its slots go back here
    cancel(s);
    sc.end(null, null);
    finish();
    return true;
  }

  /** Gives up whatever the state, as a crash would: nothing it does is handed on any more. */
  synchronized void abandon() {
    if (state != State.LEFT) {
      state = State.ABANDONED;
    }
  }

  /** Whether the thread is inside the handler now, or an asynchronous stage is pending. */
  synchronized boolean inside() {
    return state == State.INSIDE || state == State.PENDING;
  }

  /** Whether an asynchronous stage is pending (no thread inside). */
  synchronized boolean pending() {
    return state == State.PENDING;
  }

  /** Whether the thread is inside the handler for longer than {@code maxNanos} (once true). */
  synchronized boolean pastCapFirstTime(long now, long maxNanos) {
    if (capReported || now - startNanos < maxNanos) {
      return false;
    }
    capReported = true;
    return true;
  }

  /**
   * Whether {@code maxNanos} have passed since the handler started: a started execution's lease is
   * no longer renewed then, inside the handler or with its outcome still waiting to be written.
   */
  synchronized boolean pastCap(long now, long maxNanos) {
    return now - startNanos >= maxNanos;
  }

  String ids() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < messages.size() && i < 20; i++) {
      sb.append(i == 0 ? "" : ",").append(messages.get(i).id());
    }
    return messages.size() > 20 ? sb.append(",...").toString() : sb.toString();
  }
}
