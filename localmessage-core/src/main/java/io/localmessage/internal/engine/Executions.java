package io.localmessage.internal.engine;

import io.localmessage.internal.store.MessageQueue;
import io.localmessage.internal.store.ReservedConnection;
import io.localmessage.spi.EngineListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executions of this replica: the worker pool that runs them, the set of those in flight, the
 * timeout watchdog and the lease renewer that watch that set, and the shutdown of what still runs.
 * Each execution's slots are given back when its thread leaves the handler, by the task that ran
 * it; its outcome goes from the execution to {@link Outcomes}, never back through here, and its
 * lease is renewed until that outcome is written.
 */
final class Executions {
  private static final Logger log = LoggerFactory.getLogger(Executions.class);
  // how long close() waits for handlers it interrupted to leave
  private static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(1);
  // threads calling asynchronous handlers: the calls only start the work, so a few are enough
  static final int ASYNC_CALLERS =
      Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors()));

  private final Settings settings;
  private final Outcomes outcomes;
  private final Slots slots;
  private final Set<Execution> inFlight = ConcurrentHashMap.newKeySet();
  // executions whose thread has left while their outcomes wait to be written: the renewer keeps
  // their leases, so no other replica runs a message whose outcome is on its way
  private final Set<Execution> unwritten = ConcurrentHashMap.newKeySet();
  private final Object idle = new Object(); // notified when an execution finishes
  private final ExecutorService workers;
  // calls asynchronous handlers (which return at once); null when no type registered one
  private final ExecutorService asyncCallers;
  private final ScheduledThreadPoolExecutor watchdog;
  private final ScheduledThreadPoolExecutor renewal;
  private final ReservedConnection renewalConnection;
  private final LoopHealth watchdogHealth;
  private final LoopHealth renewerHealth;

  Executions(
      Settings settings,
      Map<String, Registration> registrations,
      MessageQueue queue,
      Outcomes outcomes,
      Slots slots,
      EngineListener listener) {
    this.settings = settings;
    this.outcomes = outcomes;
    this.slots = slots;
    String workerName = "lm-worker-" + settings.replicaId();
    boolean anyAsync = registrations.values().stream().anyMatch(Registration::isAsync);
    boolean anyBlocking = registrations.values().stream().anyMatch(r -> !r.isAsync());
    if (settings.virtualThreads()) {
      // one virtual thread per execution: blocking handlers hold no platform thread while waiting
      this.workers = VirtualThreads.perTaskExecutor(workerName);
      this.asyncCallers = anyAsync ? workers : null;
    } else {
      // a thread per slot, created on demand: only types with blocking handlers use them
      this.workers = pool(anyBlocking ? settings.concurrency() : 1, workerName);
      this.asyncCallers = anyAsync ? pool(ASYNC_CALLERS, "lm-async-" + settings.replicaId()) : null;
    }
    Duration stuck = settings.loopStuckAfter();
    // one watchdog scans the in-flight set instead of a timer task per message: no per-message
    // scheduling cost on the hot path, timeouts fire within one tick of their deadline
    this.watchdog =
        new ScheduledThreadPoolExecutor(1, Threads.named("lm-watchdog-" + settings.replicaId()));
    long tick = Math.max(5, Math.min(100, minTimeoutMillis(registrations) / 10));
    this.watchdogHealth =
        new LoopHealth(
            "watchdog",
            settings.ticker(),
            Threads.max(stuck, Duration.ofMillis(tick * 10)),
            () -> true);
    this.watchdog.scheduleWithFixedDelay(this::timeOutOverdue, tick, tick, TimeUnit.MILLISECONDS);
    Duration renewTick = LeaseRenewer.tick(settings.lease());
    this.renewerHealth =
        new LoopHealth(
            "renewer",
            settings.ticker(),
            Threads.max(stuck, renewTick.multipliedBy(10)),
            () -> true);
    this.renewalConnection = queue.reserveConnection();
    LeaseRenewer renewer =
        new LeaseRenewer(
            queue,
            renewalConnection,
            inFlight,
            unwritten,
            listener,
            renewerHealth,
            settings.lease(),
            settings.maxExecutionTime(),
            settings.ticker());
    this.renewal =
        new ScheduledThreadPoolExecutor(1, Threads.named("lm-renewer-" + settings.replicaId()));
    this.renewal.scheduleWithFixedDelay(
        renewer::renewDue, renewTick.toMillis(), renewTick.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static ThreadPoolExecutor pool(int threads, String name) {
    ThreadPoolExecutor p =
        new ThreadPoolExecutor(
            threads,
            threads,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            Threads.named(name));
    p.allowCoreThreadTimeOut(true);
    return p;
  }

  private static long minTimeoutMillis(Map<String, Registration> registrations) {
    return registrations.values().stream()
        .mapToLong(r -> r.config.handlerTimeout().toMillis())
        .min()
        .orElse(1000);
  }

  LoopHealth watchdogHealth() {
    return watchdogHealth;
  }

  LoopHealth renewerHealth() {
    return renewerHealth;
  }

  /**
   * Starts one execution of {@code messages} (their slots already reserved). From here on the slots
   * belong to the execution: the task that runs it gives them back when the thread leaves. Returns
   * null when the pool refuses (closing): then nothing was started and the caller still owns the
   * slots and the claimed rows.
   */
  Execution start(Registration reg, List<ClaimedMessage> messages) {
    if (!renewalConnection.held()) {
      // before the handlers that may take the rest of the pool: the renewer's connection (kept
      // while executions are in flight, given back after a lease without any)
      renewalConnection.reserve();
    }
    Execution e =
        new Execution(
            reg, messages, outcomes, settings.tracing(), settings.ticker(), this::finished);
    inFlight.add(e);
    try {
      (reg.isAsync() ? asyncCallers : workers).execute(e);
    } catch (RuntimeException rejected) {
      inFlight.remove(e);
      e.abandon();
      e.written.complete(null);
      return null;
    }
    return e;
  }

  /** An execution is over (its thread left, or its stage ended): its slots go back. */
  private void finished(Execution e) {
    unwritten.add(e);
    e.written.whenComplete((done, failed) -> unwritten.remove(e));
    inFlight.remove(e);
    slots.finished(e.registration, e.messages.size(), outcomes.avgHandlerNanos());
    synchronized (idle) {
      idle.notifyAll();
    }
  }

  /** Waits until no execution is in flight or {@code timeout} passed; returns whether none is. */
  private boolean awaitIdle(Duration timeout) {
    return awaitNone(timeout, e -> true);
  }

  /**
   * Waits until no execution in flight matches {@code awaited} or {@code timeout} passed; returns
   * whether none does.
   */
  private boolean awaitNone(Duration timeout, java.util.function.Predicate<Execution> awaited) {
    long deadline = settings.ticker().nanos() + timeout.toNanos();
    synchronized (idle) {
      while (inFlight.stream().anyMatch(awaited)) {
        long left = deadline - settings.ticker().nanos();
        if (left <= 0) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(idle, Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        } catch (InterruptedException ex) {
          Thread.currentThread().interrupt();
          return inFlight.stream().noneMatch(awaited);
        }
      }
      return true;
    }
  }

  /**
   * Interrupts handlers past their timeout. Writes nothing: the timeout outcome is written when the
   * handler's thread leaves, and the lease stays renewed until then.
   */
  private void timeOutOverdue() {
    try {
      long now = settings.ticker().nanos();
      for (Execution e : inFlight) {
        if (!e.overdue(now)) {
          continue;
        }
        if (e.timeOut()) {
          log.warn(
              "event=handler_timeout biz_type={} ids={} timeout={} note=interrupted; the retry is"
                  + " written when the handler returns, the lease is kept until then",
              e.registration.bizType,
              e.ids(),
              e.registration.config.handlerTimeout());
        } else if (e.expirePending()) {
          log.warn(
              "event=handler_timeout biz_type={} ids={} timeout={} note=stage cancelled; its late"
                  + " completion is ignored and the message is not due before its lease ends",
              e.registration.bizType,
              e.ids(),
              e.registration.config.handlerTimeout());
        }
      }
      watchdogHealth.success();
    } catch (Throwable t) {
      // a scheduled task that throws is never run again: the watchdog must survive anything
      watchdogHealth.failure(t);
      log.error("event=watchdog_failed error={}", t.toString());
    }
  }

  /**
   * The executions' part of a graceful stop: waits for handlers up to the shutdown timeout, then
   * interrupts what still runs and waits a short grace. An interrupted execution that leaves within
   * the grace writes its own outcome (a success stands, anything else gives the attempt back and is
   * due at once). One that is still inside keeps its lease: its attempt is given back, the lease
   * end is left as it is, its version moves on so its late outcome is dropped, and its lease is no
   * longer renewed.
   */
  void close() {
    workers.shutdown();
    if (asyncCallers != null) {
      asyncCallers.shutdown();
    }
    // the pools drain their queued executions; pending stages are waited for as well
    boolean drained = awaitIdle(settings.shutdownTimeout());
    if (!drained) {
      log.warn(
          "event=shutdown_timeout in_flight={} waited={}",
          inFlight.size(),
          settings.shutdownTimeout());
      // a pending stage is not interrupted: cancelling it would make its message due at once
      // while its effect may still be under way; it is given up on below and keeps its lease
      inFlight.forEach(Execution::interruptForShutdown);
      // the grace is for interrupted threads to leave; a pending stage was not interrupted and
      // will not end for it, so close does not wait the grace for stages alone
      awaitNone(SHUTDOWN_GRACE, e -> !e.pending());
    }
    // the renewer's connection goes back on the renewer's own thread, after a renewal under way
    renewal.execute(renewalConnection::close);
    renewal.shutdown();
    int kept = 0;
    for (Execution e : inFlight) {
      if (!e.abandonIfInside()) {
        continue;
      }
      for (ClaimedMessage m : e.messages) {
        if (m.fenced()) {
          continue;
        }
        kept++;
        outcomes.keepLease(m);
      }
      e.written.complete(null);
    }
    if (kept > 0) {
      log.warn(
          "event=leases_kept replica={} tickets={} note=handlers still running after the shutdown"
              + " timeout keep their leases until they end; their attempts are given back",
          settings.replicaId(),
          kept);
    }
  }

  /** After the writer stopped: the watchdog goes, and the renewer gets a last short wait. */
  void finish() {
    watchdog.shutdownNow();
    // the renewer gave its connection back on its own thread (close()); a renewal still under way
    // is waited for a second, then left to end and give it back
    Threads.await(renewal, Duration.ofSeconds(1));
  }

  /** The last wait for the worker threads, at the very end of a stop. */
  void awaitWorkers() {
    Threads.await(workers, Duration.ofSeconds(1));
    if (asyncCallers != null && asyncCallers != workers) {
      Threads.await(asyncCallers, Duration.ofSeconds(1));
    }
  }

  /** Gives up on every execution as a crash would: nothing they do is written any more. */
  void abandonAll() {
    for (Execution e : inFlight) {
      e.abandon();
      e.written.complete(null);
    }
  }

  /** Stops the pool, the watchdog and the renewer at once. */
  void halt() {
    workers.shutdownNow();
    if (asyncCallers != null) {
      asyncCallers.shutdownNow();
    }
    watchdog.shutdownNow();
    renewal.shutdownNow();
  }

  /**
   * After {@link #halt()}: waits at most {@code timeout} for the watchdog and the renewer, then
   * gives the renewer's connection back (not while a renewal is still under way on it).
   */
  void awaitLoops(Duration timeout) {
    long deadline = settings.ticker().nanos() + timeout.toNanos();
    Threads.await(watchdog, Threads.left(settings.ticker(), deadline));
    if (Threads.await(renewal, Threads.left(settings.ticker(), deadline))) {
      renewalConnection.close();
    }
  }
}
