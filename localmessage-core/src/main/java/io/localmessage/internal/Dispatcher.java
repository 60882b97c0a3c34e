package io.localmessage.internal;

import io.localmessage.Outcome;
import io.localmessage.StoreException;
import io.localmessage.jdbc.TicketStore;
import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.EngineListener;
import io.localmessage.spi.Transition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims due tickets within free slots, runs them on the worker pool and hands their outcomes to
 * the write-behind. One poller thread; {@link #runOnce()} and the after-commit hints use the same
 * claim path.
 */
final class Dispatcher {
  private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
  private static final String EXPIRED_LAST_ATTEMPT =
      "attempts exhausted: the last delivery's lease ended without an outcome"
          + " (worker crashed or overran its lease)";
  private static final Duration FULL_SWEEP_INTERVAL = Duration.ofMinutes(10);
  private static final Duration SWEEP_OVERLAP = Duration.ofSeconds(5);
  // bounds of the extra wait for a fuller claim, see awaitFullerClaim()
  private static final long MIN_GRACE_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
  private static final long MAX_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final Settings settings;
  private final TicketStore store;
  private final Map<String, Registration> registrations;
  private final EngineListener listener;
  private final OutcomePolicy policy;
  private final WriteBehind writer;
  private final Semaphore totalSlots;
  private final ThreadPoolExecutor workers;
  private final ScheduledThreadPoolExecutor timer;
  private final Set<Execution> inFlight = ConcurrentHashMap.newKeySet();
  private final ConcurrentLinkedQueue<Long> hints = new ConcurrentLinkedQueue<>();
  private final ReentrantLock claimLock = new ReentrantLock();
  private final ReentrantLock signalLock = new ReentrantLock();
  private final Condition signalled = signalLock.newCondition();
  private final int wakeThreshold;
  private volatile long lastClaimNanos;
  // moving average of handler call times (1/16 weight per call; racy updates only blur it)
  private volatile long avgHandlerNanos;
  private boolean signal;
  private volatile boolean starved;
  private volatile boolean running;
  private volatile boolean stopped;
  private Thread poller;
  private volatile Set<String> paused = Set.of();
  private long pausedReadAt;
  private long maintenanceAt;
  private long sweptAt;
  private long fullSweptAt;
  private int rotation;

  Dispatcher(
      Settings settings,
      TicketStore store,
      Map<String, Registration> registrations,
      EngineListener listener) {
    this.settings = settings;
    this.store = store;
    this.registrations = registrations;
    this.listener = listener;
    this.policy = new OutcomePolicy(settings.redactor());
    this.totalSlots = new Semaphore(settings.concurrency());
    // after a full batch the next claim waits until half the slots are free (or a poll interval
    // passed): fewer, fuller claims instead of one small claim per finished ticket
    this.wakeThreshold = Math.max(1, settings.concurrency() / 2);
    this.workers =
        new ThreadPoolExecutor(
            settings.concurrency(),
            settings.concurrency(),
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            named("lm-worker-" + settings.replicaId()));
    this.workers.allowCoreThreadTimeOut(true);
    // one watchdog scans the in-flight set instead of a timer task per ticket: no per-ticket
    // scheduling cost on the hot path, timeouts fire within one tick of their deadline
    this.timer = new ScheduledThreadPoolExecutor(1, named("lm-watchdog-" + settings.replicaId()));
    long tick = Math.max(5, Math.min(100, minTimeoutMillis(registrations) / 10));
    this.timer.scheduleWithFixedDelay(this::timeOutOverdue, tick, tick, TimeUnit.MILLISECONDS);
    this.writer = new WriteBehind(store, listener, settings.writeBatchSize(), settings.replicaId());
  }

  private static long minTimeoutMillis(Map<String, Registration> registrations) {
    return registrations.values().stream()
        .mapToLong(r -> r.config.handlerTimeout().toMillis())
        .min()
        .orElse(1000);
  }

  private void timeOutOverdue() {
    long now = System.nanoTime();
    for (Execution e : inFlight) {
      if (e.overdue(now)) {
        e.timeOut();
      }
    }
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  // ---------------------------------------------------------------- lifecycle

  void start() {
    running = true;
    poller = new Thread(this::pollLoop, "lm-poller-" + settings.replicaId());
    poller.setDaemon(true);
    poller.start();
  }

  /** Invariant 8: stop claiming, wait for handlers, write back, release what is still held. */
  void close() {
    running = false;
    stopped = true;
    signal();
    joinPoller();
    workers.shutdown();
    boolean drained = await(workers, settings.shutdownTimeout());
    if (!drained) {
      log.warn(
          "event=shutdown_timeout in_flight={} waited={}",
          inFlight.size(),
          settings.shutdownTimeout());
      workers.shutdownNow();
    }
    List<Transition> release = new ArrayList<>();
    for (Execution e : inFlight) {
      if (e.abandon()) {
        for (ClaimedMessage m : e.messages) {
          release.add(new Transition(m.id(), m.row().version(), 0, 0, null, 0));
        }
      }
    }
    writer.close(settings.writeBackMargin().plusSeconds(5));
    if (!release.isEmpty()) {
      try {
        int n = store.updateIfCurrent(release);
        log.info("event=leases_released replica={} tickets={}", settings.replicaId(), n);
      } catch (StoreException e) {
        log.warn(
            "event=lease_release_failed replica={} tickets={} error={}",
            settings.replicaId(),
            release.size(),
            e.getCause() == null ? e.toString() : e.getCause().toString());
      }
    }
    timer.shutdownNow();
    await(workers, Duration.ofSeconds(1));
  }

  /** Stops everything at once without writing anything back, as kill -9 would. */
  void halt() {
    running = false;
    stopped = true;
    for (Execution e : inFlight) {
      e.abandon();
    }
    writer.halt();
    signal();
    workers.shutdownNow();
    timer.shutdownNow();
    joinPoller();
  }

  private void joinPoller() {
    if (poller != null) {
      try {
        poller.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static boolean await(ExecutorService pool, Duration timeout) {
    try {
      return pool.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  // ---------------------------------------------------------------- polling

  void hint(Collection<Long> ids) {
    if (stopped || ids.isEmpty()) {
      return;
    }
    if (!running) {
      return;
    }
    hints.addAll(ids);
    signal();
  }

  private void signal() {
    signalLock.lock();
    try {
      signal = true;
      signalled.signalAll();
    } finally {
      signalLock.unlock();
    }
  }

  private void awaitSignal(Duration max) {
    signalLock.lock();
    try {
      long nanos = max.toNanos();
      while (!signal && nanos > 0 && running) {
        nanos = signalled.awaitNanos(nanos);
      }
      signal = false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      signalLock.unlock();
    }
  }

  private void pollLoop() {
    long lastGeneral = 0;
    boolean lastFull = false;
    int failures = 0;
    while (running) {
      try {
        maintainIfDue();
        List<Long> hinted = drainHints();
        if (!hinted.isEmpty()) {
          claimAndRun(hinted, null);
        }
        boolean slotsCameBack = starved && totalSlots.availablePermits() > 0;
        long now = System.nanoTime();
        boolean full = false;
        if (lastFull || slotsCameBack || now - lastGeneral >= settings.pollInterval().toNanos()) {
          ClaimResult r = claimAndRun(null, null);
          lastGeneral = now;
          full = r.full;
          starved = r.noFreeSlots || r.full;
        }
        lastFull = full;
        failures = 0;
        if (!full && hints.isEmpty()) {
          awaitSignal(settings.pollInterval());
        } else if (full) {
          awaitFullerClaim();
        }
      } catch (RuntimeException e) {
        failures++;
        log.warn(
            "event=poll_failed replica={} failures={} error={}",
            settings.replicaId(),
            failures,
            e.getCause() == null ? e.toString() : e.getCause().toString());
        long backoff =
            Math.min(settings.pollInterval().toMillis() << Math.min(failures, 6), 10_000);
        awaitSignal(Duration.ofMillis(backoff));
      }
    }
  }

  /**
   * After a full claim: wait until half the slots are free (or a poll interval passed), then, when
   * handler calls are short, a little longer for the rest, at most as long as the last claim took.
   * Waiting that long costs at most what a second, smaller claim would, and with fast handlers
   * every claim comes back full: one round trip for {@code concurrency} tickets instead of two for
   * half as many each. Handlers slower than that wait would not fill the claim anyway; for them the
   * next claim overlaps the calls still running.
   */
  private void awaitFullerClaim() {
    if (totalSlots.availablePermits() < wakeThreshold) {
      awaitSignal(settings.pollInterval());
    }
    long grace = Math.max(MIN_GRACE_NANOS, Math.min(MAX_GRACE_NANOS, lastClaimNanos));
    if (avgHandlerNanos > grace) {
      return;
    }
    long deadline = System.nanoTime() + grace;
    while (running && hints.isEmpty() && totalSlots.availablePermits() < settings.concurrency()) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      awaitSignal(Duration.ofNanos(left));
    }
  }

  private List<Long> drainHints() {
    List<Long> ids = new ArrayList<>();
    Long id;
    while (ids.size() < 1000 && (id = hints.poll()) != null) {
      ids.add(id);
    }
    return ids;
  }

  private void maintainIfDue() {
    long now = System.nanoTime();
    if (now - maintenanceAt < settings.maintenanceInterval().toNanos()) {
      return;
    }
    maintenanceAt = now;
    maintain(false);
  }

  /**
   * Sweeps last attempts whose lease ran out to DEAD and purges expired retained successes. The
   * sweep looks at every due ticket on the first call, every {@link #FULL_SWEEP_INTERVAL} (a safety
   * net for rows edited by hand) and whenever {@code full}; otherwise only at leases that ended
   * since the last complete sweep, plus {@link #SWEEP_OVERLAP} for clock skew.
   */
  synchronized void maintain(boolean full) {
    long now = System.nanoTime();
    boolean fullSweep = full || sweptAt == 0 || now - fullSweptAt >= FULL_SWEEP_INTERVAL.toNanos();
    long since = sweptAt;
    TicketStore.Sweep sweep =
        store.expireExhausted(
            registrations.keySet(),
            EXPIRED_LAST_ATTEMPT,
            fullSweep
                ? null
                : () ->
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since)
                        + SWEEP_OVERLAP.toMillis());
    if (!sweep.limited()) {
      // the next window starts here; after a limited sweep it keeps its start, so the candidates
      // left over are found next time
      sweptAt = now;
      if (fullSweep) {
        fullSweptAt = now;
      }
    }
    int expired = sweep.expired();
    if (expired > 0) {
      log.warn("event=expired_last_attempt tickets={}", expired);
      safe(() -> listener.expiredLastAttempt(expired));
    }
    for (Registration r : registrations.values()) {
      if (!r.config.retainSucceeded().isZero()) {
        store.purge(
            io.localmessage.MessageStatus.SUCCEEDED,
            r.bizType,
            r.config.retainSucceeded(),
            settings.purgeBatchSize());
      }
    }
  }

  /** Manual mode: one claim round, run, wait for the write-backs. */
  int runOnce() {
    if (stopped) {
      throw new IllegalStateException("the engine is closed");
    }
    maintain(true);
    List<Execution> started = new ArrayList<>();
    ClaimResult r = claimAndRun(null, started);
    long deadline = System.nanoTime() + settings.lease().plus(settings.writeBackMargin()).toNanos();
    for (Execution e : started) {
      try {
        e.written.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        break;
      } catch (Exception ex) {
        log.warn("event=run_once_wait_failed error={}", ex.toString());
      }
    }
    return r.claimed;
  }

  private record ClaimResult(int claimed, boolean full, boolean noFreeSlots) {}

  private ClaimResult claimAndRun(List<Long> onlyIds, List<Execution> started) {
    claimLock.lock();
    try {
      refreshPausedIfStale();
      List<ClaimRequest.TypeLimit> limits = new ArrayList<>();
      Map<String, Integer> reserved = new HashMap<>();
      List<Registration> regs = new ArrayList<>(registrations.values());
      boolean wanted = false;
      int cap = onlyIds == null ? Integer.MAX_VALUE : onlyIds.size();
      long active = regs.stream().filter(r -> !paused.contains(r.bizType)).count();
      // a fair share of the free slots per type, so one busy type cannot starve the others; a
      // type that fills its share makes the poller come back at once for the rest
      int share =
          active == 0
              ? 0
              : (int) Math.max(1, (totalSlots.availablePermits() + active - 1) / active);
      for (int i = 0; i < regs.size(); i++) {
        Registration reg = regs.get((i + rotation) % regs.size());
        if (paused.contains(reg.bizType)) {
          continue;
        }
        wanted = true;
        int n =
            Math.min(
                Math.min(cap, share),
                Math.min(reg.slots.availablePermits(), totalSlots.availablePermits()));
        if (n <= 0 || !totalSlots.tryAcquire(n)) {
          continue;
        }
        if (!reg.slots.tryAcquire(n)) {
          totalSlots.release(n);
          continue;
        }
        reserved.put(reg.bizType, n);
        limits.add(new ClaimRequest.TypeLimit(reg.bizType, n, reg.config.ordered()));
      }
      rotation++;
      if (limits.isEmpty()) {
        return new ClaimResult(0, false, wanted);
      }
      List<ClaimedRow> rows;
      long t0 = System.nanoTime();
      try {
        rows =
            store.claim(
                new ClaimRequest(
                    limits, settings.lease().toMillis(), settings.replicaId(), onlyIds));
      } catch (RuntimeException e) {
        reserved.forEach(
            (type, n) -> {
              registrations.get(type).slots.release(n);
              totalSlots.release(n);
            });
        throw e;
      }
      lastClaimNanos = System.nanoTime() - t0;
      Duration queryTime = Duration.ofNanos(lastClaimNanos);
      Map<String, List<ClaimedMessage>> byType = new LinkedHashMap<>();
      for (ClaimedRow row : rows) {
        byType.computeIfAbsent(row.bizType(), t -> new ArrayList<>()).add(new ClaimedMessage(row));
      }
      boolean full = false;
      for (ClaimRequest.TypeLimit limit : limits) {
        List<ClaimedMessage> got = byType.getOrDefault(limit.bizType(), List.of());
        int unused = limit.limit() - got.size();
        Registration reg = registrations.get(limit.bizType());
        if (unused > 0) {
          reg.slots.release(unused);
          totalSlots.release(unused);
        } else {
          full = true;
        }
        if (!got.isEmpty()) {
          int reclaims = 0;
          for (ClaimedMessage m : got) {
            if (m.row().leaseExpired()) {
              reclaims++;
              log.info(
                  "event=lease_reclaimed biz_type={} id={} idem_key={} attempt={}",
                  m.bizType(),
                  m.id(),
                  m.idemKey(),
                  m.attempt());
            }
          }
          int r = reclaims;
          safe(() -> listener.claimed(limit.bizType(), got.size(), r, queryTime));
          submit(reg, got, started);
        }
      }
      return new ClaimResult(rows.size(), full, false);
    } finally {
      claimLock.unlock();
    }
  }

  private void refreshPausedIfStale() {
    long now = System.nanoTime();
    if (pausedReadAt == 0 || now - pausedReadAt >= settings.pollInterval().toNanos()) {
      paused = store.pausedTypes();
      pausedReadAt = now;
    }
  }

  /** Forgets the cached paused set so the next claim reads it again. */
  void invalidatePaused() {
    pausedReadAt = 0;
  }

  // ---------------------------------------------------------------- running handlers

  private void submit(Registration reg, List<ClaimedMessage> got, List<Execution> started) {
    int chunk = reg.isBatch() ? reg.config.batchSize() : 1;
    for (int i = 0; i < got.size(); i += chunk) {
      List<ClaimedMessage> part = got.subList(i, Math.min(got.size(), i + chunk));
      Execution e = new Execution(reg, List.copyOf(part), this::decided, this::finished);
      inFlight.add(e);
      if (started != null) {
        started.add(e);
      }
      try {
        workers.execute(e);
      } catch (RuntimeException rejected) {
        // closing: leave the tickets leased; close() releases them or the lease runs out
        inFlight.remove(e);
        e.abandon();
        reg.slots.release(part.size());
        totalSlots.release(part.size());
        e.written.complete(null);
      }
    }
  }

  private void finished(Execution e) {
    inFlight.remove(e);
    int n = e.messages.size();
    e.registration.slots.release(n);
    totalSlots.release(n);
    if (starved && totalSlots.availablePermits() >= wakeThreshold) {
      signal();
    }
  }

  private void decided(Execution e, List<Outcome> outcomes, boolean timedOut, Duration took) {
    long avg = avgHandlerNanos;
    avgHandlerNanos = avg + ((took.toNanos() - avg) >> 4);
    AtomicInteger pending = new AtomicInteger(e.messages.size());
    Runnable onWritten =
        () -> {
          if (pending.decrementAndGet() == 0) {
            e.written.complete(null);
          }
        };
    for (int i = 0; i < e.messages.size(); i++) {
      ClaimedMessage m = e.messages.get(i);
      OutcomePolicy.Decision d =
          policy.decide(e.registration.config, m.row(), outcomes.get(i), timedOut, took);
      logDecision(m, d);
      Duration sinceCreated = Duration.between(m.createdAt(), m.row().dbNow()).plus(took);
      safe(() -> listener.delivered(m.bizType(), d.result(), m.attempt(), took, sinceCreated));
      writer.submit(
          new WriteItem(m.bizType(), m.id(), m.row().version(), d.transition(), onWritten));
    }
  }

  private static void logDecision(ClaimedMessage m, OutcomePolicy.Decision d) {
    switch (d.result()) {
      case SUCCESS ->
          log.debug(
              "event=delivered biz_type={} id={} idem_key={} attempt={}",
              m.bizType(),
              m.id(),
              m.idemKey(),
              m.attempt());
      case RETRY, TIMEOUT, RETRY_AFTER ->
          log.info(
              "event=retry_scheduled biz_type={} id={} idem_key={} attempt={} result={} error={}",
              m.bizType(),
              m.id(),
              m.idemKey(),
              m.attempt(),
              d.result(),
              d.error());
      case PERMANENT, EXHAUSTED ->
          log.warn(
              "event=dead biz_type={} id={} idem_key={} attempt={} result={} error={}",
              m.bizType(),
              m.id(),
              m.idemKey(),
              m.attempt(),
              d.result(),
              d.error());
    }
  }

  private static void safe(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      log.warn("event=listener_failed error={}", e.toString());
    }
  }
}
