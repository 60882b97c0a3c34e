package io.localmessage.internal.engine;

import io.localmessage.Message;
import io.localmessage.Outcome;
import io.localmessage.PermanentFailure;
import io.localmessage.RetryAfter;
import io.localmessage.spi.TracePropagation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One handler call on a worker thread: a single message, or a chunk for a batch handler.
 *
 * <p>The outcome is handed to {@link Outcomes} only when the thread has left the handler, never
 * earlier: a timeout or a shutdown only interrupts the thread and marks how it ended, so no
 * write-back can make the message due while this execution may still be running it. An execution
 * the engine gave up on ({@link #abandonIfInside()}, {@link #abandon()}) hands nothing on when its
 * thread finally leaves. The slots are given back when the thread leaves (by {@link Executions},
 * which runs it), so a handler that ignores interrupts keeps its slot and nothing queues behind it.
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
    SHUTDOWN
  }

  private enum State {
    NEW,
    INSIDE,
    LEFT,
    ABANDONED
  }

  final Registration registration;
  final List<ClaimedMessage> messages;

  /** Completes when the outcome has been written back, dropped or abandoned. */
  final CompletableFuture<Void> written = new CompletableFuture<>();

  private final Outcomes outcomes;
  private final TracePropagation tracing;
  private State state = State.NEW; // guarded by this
  private boolean timedOut; // guarded by this
  private boolean shutdownInterrupted; // guarded by this
  private boolean capReported; // guarded by this
  private Thread thread; // guarded by this
  private volatile long startNanos;
  private volatile long deadlineNanos;

  Execution(
      Registration registration,
      List<ClaimedMessage> messages,
      Outcomes outcomes,
      TracePropagation tracing) {
    this.registration = registration;
    this.messages = messages;
    this.outcomes = outcomes;
    this.tracing = tracing;
  }

  @Override
  public void run() {
    try {
      synchronized (this) {
        if (state != State.NEW) {
          written.complete(null);
          return;
        }
        state = State.INSIDE;
        thread = Thread.currentThread();
        startNanos = System.nanoTime();
        deadlineNanos = startNanos + registration.config.handlerTimeout().toNanos();
      }
      // the handler runs in its message's trace and MDC; both are gone before the outcome moves on
      HandlerScope scope =
          HandlerScope.start(tracing, registration.bizType, messages, registration.isBatch());
      List<Outcome> result;
      try (TracePropagation.Scope inside = scope.enter()) {
        result = invoke();
      }
      Ending ending;
      synchronized (this) {
        if (state == State.ABANDONED) {
          ending = null;
        } else {
          state = State.LEFT;
          ending = timedOut ? Ending.TIMED_OUT : shutdownInterrupted ? Ending.SHUTDOWN : null;
          if (ending == null) {
            ending = Ending.NORMAL;
          }
        }
      }
      // an interrupt meant for this handler must not leak into the rest of this thread's work
      Thread.interrupted();
      scope.end(result, ending);
      if (ending == null) {
        written.complete(null);
        return;
      }
      try {
        outcomes.decided(this, result, ending, Duration.ofNanos(System.nanoTime() - startNanos));
      } catch (Throwable t) {
        // the messages stay leased and run again when the lease ends; the slot must not leak
        log.error(
            "event=outcome_routing_failed biz_type={} ids={} error={}",
            registration.bizType,
            ids(),
            t.toString());
        written.complete(null);
      }
    } finally {
      Thread.interrupted();
    }
  }

  private List<Outcome> invoke() {
    List<Message> batch = Collections.unmodifiableList(messages);
    try {
      if (registration.isBatch()) {
        List<Outcome> result = registration.batchHandler.handle(batch);
        List<Outcome> each = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
          Outcome o = result != null && i < result.size() ? result.get(i) : null;
          each.add(o != null ? o : Outcome.retry("batch handler returned no outcome"));
        }
        return each;
      }
      registration.handler.handle(messages.get(0));
      return List.of(Outcome.success());
    } catch (PermanentFailure e) {
      return same(Outcome.permanent(Outcome.describe(e)));
    } catch (RetryAfter e) {
      return same(Outcome.retryAfter(e.delay(), e.getMessage()));
    } catch (Throwable e) {
      // every throwable is an outcome: an Error thrown by a handler must not kill the worker or
      // leave the message waiting a whole lease without a last_error
      if (e instanceof VirtualMachineError) {
        log.error(
            "event=handler_vm_error biz_type={} ids={} error={}",
            registration.bizType,
            ids(),
            e.toString());
      }
      return same(Outcome.retry(e));
    }
  }

  private List<Outcome> same(Outcome o) {
    return Collections.nCopies(messages.size(), o);
  }

  /** Whether the handler has run past its timeout at {@code now} (a {@code System.nanoTime()}). */
  boolean overdue(long now) {
    long d = deadlineNanos;
    return d != 0 && now - d >= 0;
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
  synchronized void interruptFenced() {
    if (state == State.INSIDE) {
      thread.interrupt();
    }
  }

  /**
   * Gives up on an execution whose thread is still inside the handler: nothing will be written when
   * it leaves. Returns whether it was inside.
   */
  synchronized boolean abandonIfInside() {
    if (state != State.INSIDE) {
      return false;
    }
    state = State.ABANDONED;
    return true;
  }

  /** Gives up whatever the state, as a crash would; returns whether an outcome was still due. */
  synchronized boolean abandon() {
    if (state == State.LEFT || state == State.ABANDONED) {
      return false;
    }
    state = State.ABANDONED;
    return true;
  }

  /** Whether the thread is inside the handler now. */
  synchronized boolean inside() {
    return state == State.INSIDE;
  }

  /** Whether the thread is inside the handler for longer than {@code maxNanos} (once true). */
  synchronized boolean pastCapFirstTime(long now, long maxNanos) {
    if (state != State.INSIDE || capReported || now - startNanos < maxNanos) {
      return false;
    }
    capReported = true;
    return true;
  }

  synchronized boolean pastCap(long now, long maxNanos) {
    return state == State.INSIDE && now - startNanos >= maxNanos;
  }

  String ids() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < messages.size() && i < 20; i++) {
      sb.append(i == 0 ? "" : ",").append(messages.get(i).id());
    }
    return messages.size() > 20 ? sb.append(",...").toString() : sb.toString();
  }
}
