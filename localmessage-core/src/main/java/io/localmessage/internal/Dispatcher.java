package io.localmessage.internal;

import io.localmessage.EngineHealth;
import io.localmessage.MessageStatus;
import io.localmessage.Outcome;
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
 * claim path. A watchdog interrupts handlers past their timeout, a renewer keeps the leases of
 * running handlers alive, and maintenance (sweep of expired last attempts, retention purge) runs on
 * its own thread so a long purge never stops claiming.
 */
final class Dispatcher {
  private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
  private static final String EXPIRED_LAST_ATTEMPT =
      "attempts exhausted: the last delivery's lease ended without an outcome"
          + " (worker crashed or overran its lease)";
  private static final Duration FULL_SWEEP_INTERVAL = Duration.ofMinutes(10);
  private static final Duration SWEEP_OVERLAP = Duration.ofSeconds(5);
  // how long close() waits for handlers it interrupted to leave
  private static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(1);
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
  private final ScheduledThreadPoolExecutor renewal;
  private final ScheduledThreadPoolExecutor maintenance;
  private final LeaseRenewer renewer;
  private final LoopHealth pollerHealth;
  private final LoopHealth writerHealth;
  private final LoopHealth watchdogHealth;
  private final LoopHealth renewerHealth;
  private final LoopHealth maintenanceHealth;
  private final long writeBackMarginNanos;
  private final long leaseNanos;
  private final Set<Execution> inFlight = ConcurrentHashMap.newKeySet();
  private final java.util.concurrent.atomic.AtomicLong nextDueNanos =
      new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);
  private final long minIntervalNanos;
  private volatile WakeUps wakeUps;
  private volatile boolean wakeRequested;
  private final ConcurrentLinkedQueue<Long> hints = new ConcurrentLinkedQueue<>();
  private final ReentrantLock claimLock = new ReentrantLock();
  private final ReentrantLock signalLock = new ReentrantLock();
  private final Condition signalled = signalLock.newCondition();
  private final int wakeThreshold;
  private volatile long lastClaimNanos;
  // when the last fair claim round ran (every type its share); between fair rounds, a round that
  // only refills after a full claim gives the free slots to the types that filled theirs
  private volatile long lastFairNanos;
  // moving average of handler call times (1/16 weight per call; racy updates only blur it)
  private volatile long avgHandlerNanos;
  private boolean signal;
  private volatile boolean starved;
  private volatile boolean running;
  private volatile boolean stopped;
  private Thread poller;
  private volatile Set<String> paused = Set.of();
  private long pausedReadAt;
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
    this.leaseNanos = settings.lease().toNanos();
    // adaptive polling: this often while claims keep finding tickets, doubling back to the poll
    // interval when they come back empty
    this.minIntervalNanos =
        Math.min(
            settings.pollInterval().toNanos(),
            Math.max(TimeUnit.MILLISECONDS.toNanos(10), settings.pollInterval().toNanos() / 10));
    this.writeBackMarginNanos = settings.writeBackMargin().toNanos();
    Duration stuck = settings.loopStuckAfter();
    this.pollerHealth =
        new LoopHealth(
            "poller",
            max(stuck, settings.pollInterval().multipliedBy(3)),
            () -> poller == null || poller.isAlive() || !running,
            () -> running);
    this.writerHealth = new LoopHealth("writer", stuck, this::writerAlive);
    // one watchdog scans the in-flight set instead of a timer task per ticket: no per-ticket
    // scheduling cost on the hot path, timeouts fire within one tick of their deadline
    this.timer = new ScheduledThreadPoolExecutor(1, named("lm-watchdog-" + settings.replicaId()));
    long tick = Math.max(5, Math.min(100, minTimeoutMillis(registrations) / 10));
    this.watchdogHealth =
        new LoopHealth("watchdog", max(stuck, Duration.ofMillis(tick * 10)), () -> true);
    this.timer.scheduleWithFixedDelay(this::timeOutOverdue, tick, tick, TimeUnit.MILLISECONDS);
    Duration renewTick = LeaseRenewer.tick(settings.lease());
    this.renewerHealth =
        new LoopHealth("renewer", max(stuck, renewTick.multipliedBy(10)), () -> true);
    this.renewer =
        new LeaseRenewer(
            store,
            inFlight,
            listener,
            renewerHealth,
            settings.lease(),
            settings.maxExecutionTime());
    this.renewal = new ScheduledThreadPoolExecutor(1, named("lm-renewer-" + settings.replicaId()));
    this.renewal.scheduleWithFixedDelay(
        renewer::renewDue, renewTick.toMillis(), renewTick.toMillis(), TimeUnit.MILLISECONDS);
    this.maintenance =
        new ScheduledThreadPoolExecutor(1, named("lm-maintenance-" + settings.replicaId()));
    this.maintenanceHealth =
        new LoopHealth(
            "maintenance",
            max(stuck, settings.maintenanceInterval().multipliedBy(3)),
            () -> true,
            () -> running);
    this.writer =
        new WriteBehind(
            store,
            listener,
            writerHealth,
            settings.writeBatchSize(),
            settings.replicaId(),
            ms -> dueAt(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms)));
  }

  /** Set by the engine before {@link #start()} on databases with wake-ups. */
  void wakeUps(WakeUps w) {
    this.wakeUps = w;
  }

  /** Another replica (or an operator) asked for a claim round now. */
  void wake() {
    wakeRequested = true;
    signal();
  }

  /** A ticket this replica knows of becomes due at {@code nanos}: claim then, not a tick later. */
  void dueAt(long nanos) {
    long before = nextDueNanos.getAndAccumulate(nanos, Math::min);
    if (nanos < before) {
      signal();
    }
  }

  private boolean writerAlive() {
    WriteBehind w = writer;
    return w == null || w.alive();
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** The health of every loop. */
  List<EngineHealth.Loop> health() {
    return List.of(
        pollerHealth.snapshot(),
        writerHealth.snapshot(),
        watchdogHealth.snapshot(),
        renewerHealth.snapshot(),
        maintenanceHealth.snapshot());
  }

  private static long minTimeoutMillis(Map<String, Registration> registrations) {
    return registrations.values().stream()
        .mapToLong(r -> r.config.handlerTimeout().toMillis())
        .min()
        .orElse(1000);
  }

  /**
   * Interrupts handlers past their timeout. Writes nothing: the timeout outcome is written when the
   * handler's thread leaves, and the lease stays renewed until then.
   */
  private void timeOutOverdue() {
    try {
      long now = System.nanoTime();
      for (Execution e : inFlight) {
        if (e.overdue(now) && e.timeOut()) {
          log.warn(
              "event=handler_timeout biz_type={} ids={} timeout={} note=interrupted; the retry is"
                  + " written when the handler returns, the lease is kept until then",
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
    pollerHealth.success(); // judged from the start, not from when the engine was built
    maintenanceHealth.success();
    running = true;
    poller = new Thread(this::pollLoop, "lm-poller-" + settings.replicaId());
    poller.setDaemon(true);
    poller.start();
    long every = settings.maintenanceInterval().toMillis();
    maintenance.scheduleWithFixedDelay(this::maintainSafely, 0, every, TimeUnit.MILLISECONDS);
  }

  private void maintainSafely() {
    try {
      maintain(false);
      maintenanceHealth.success();
    } catch (Throwable t) {
      maintenanceHealth.failure(t);
      log.warn(
          "event=maintenance_failed replica={} error={}",
          settings.replicaId(),
          LeaseRenewer.describe(t));
    }
  }

  /**
   * Graceful stop: stop claiming, wait for handlers, interrupt what still runs after the shutdown
   * timeout. An interrupted execution that leaves the handler within a short grace writes its own
   * outcome (a success stands, anything else gives the attempt back and is due at once). One that
   * is still inside keeps its lease: its attempt is given back, the lease end is left as it is, its
   * version moves on so its late outcome is dropped, and its lease is no longer renewed.
   */
  void close() {
    running = false;
    stopped = true;
    signal();
    joinPoller();
    maintenance.shutdown();
    workers.shutdown();
    boolean drained = await(workers, settings.shutdownTimeout());
    if (!drained) {
      log.warn(
          "event=shutdown_timeout in_flight={} waited={}",
          inFlight.size(),
          settings.shutdownTimeout());
      inFlight.forEach(Execution::interruptForShutdown);
      await(workers, SHUTDOWN_GRACE);
    }
    renewal.shutdownNow();
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
        writer.submit(
            new WriteItem(
                m.bizType(),
                m.id(),
                m.row().version(),
                new Transition(
                    m.id(),
                    m.row().version(),
                    0,
                    0,
                    Texts.sanitize(
                        "interrupted by the shutdown of replica "
                            + settings.replicaId()
                            + " while the handler was still running; the attempt was given back",
                        OutcomePolicy.MAX_ERROR_LENGTH),
                    -1,
                    true),
                () -> {},
                m.leaseEndNanos() - writeBackMarginNanos));
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
    writer.close(settings.writeBackMargin().plusSeconds(5));
    timer.shutdownNow();
    maintenance.shutdownNow();
    await(maintenance, Duration.ofSeconds(1));
    await(workers, Duration.ofSeconds(1));
  }

  /** Stops everything at once without writing anything back, as kill -9 would. */
  void halt() {
    running = false;
    stopped = true;
    for (Execution e : inFlight) {
      e.abandon();
      e.written.complete(null);
    }
    writer.halt();
    signal();
    workers.shutdownNow();
    timer.shutdownNow();
    renewal.shutdownNow();
    maintenance.shutdownNow();
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
    long interval = settings.pollInterval().toNanos();
    boolean lastFull = false;
    int failures = 0;
    while (running) {
      try {
        List<Long> hinted = drainHints();
        if (!hinted.isEmpty()) {
          ClaimResult h = claimAndRun(hinted, null, false);
          WakeUps w = wakeUps;
          if (w != null && h.claimed < hinted.size()) {
            // committed tickets this replica cannot run now: let another replica take them
            w.requestNotify();
          }
        }
        boolean slotsCameBack = starved && totalSlots.availablePermits() > 0;
        long now = System.nanoTime();
        long due = nextDueNanos.get();
        boolean dueReached = due != Long.MAX_VALUE && now - due >= 0;
        boolean woken = wakeRequested;
        boolean full = false;
        if (lastFull || slotsCameBack || woken || dueReached || now - lastGeneral >= interval) {
          wakeRequested = false;
          if (dueReached) {
            nextDueNanos.compareAndSet(due, Long.MAX_VALUE);
          }
          // a fair round at least every poll interval, and whenever something new may be due;
          // otherwise (a full claim asks for more) refill the types that filled their share
          boolean fair =
              woken
                  || dueReached
                  || now - lastFairNanos >= settings.pollInterval().toNanos()
                  || !(lastFull || slotsCameBack);
          ClaimResult r = claimAndRun(null, null, !fair);
          lastGeneral = now;
          full = r.full;
          starved = r.noFreeSlots || r.full;
          interval =
              r.claimed > 0
                  ? minIntervalNanos
                  : Math.min(settings.pollInterval().toNanos(), interval * 2);
        }
        lastFull = full;
        failures = 0;
        pollerHealth.success();
        if (!full && hints.isEmpty()) {
          long after = System.nanoTime();
          long wait = lastGeneral + interval - after;
          long next = nextDueNanos.get();
          if (next != Long.MAX_VALUE) {
            wait = Math.min(wait, next - after);
          }
          if (wait > 0) {
            awaitSignal(Duration.ofNanos(wait));
          }
        } else if (full) {
          awaitFullerClaim();
        }
      } catch (Throwable e) {
        // nothing may stop the poller: log, pause, try again
        pollerHealth.failure(e);
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
            MessageStatus.SUCCEEDED,
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
    ClaimResult r = claimAndRun(null, started, false);
    long longestTimeout =
        registrations.values().stream()
            .mapToLong(reg -> reg.config.handlerTimeout().toNanos())
            .max()
            .orElse(0);
    long deadline =
        System.nanoTime()
            + longestTimeout
            + settings.lease().plus(settings.writeBackMargin()).toNanos();
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

  /**
   * One claim round. {@code refill}: the round follows a full claim before the next fair round, and
   * only types that filled their share last time take part (when there are any), sharing every free
   * slot: with many types registered and work in few, a fair round alone hands a busy type {@code
   * free / types} slots per statement and leaves the rest idle until the next round.
   */
  private ClaimResult claimAndRun(List<Long> onlyIds, List<Execution> started, boolean refill) {
    claimLock.lock();
    try {
      refreshPausedIfStale();
      List<ClaimRequest.TypeLimit> limits = new ArrayList<>();
      Map<String, Integer> reserved = new HashMap<>();
      List<Registration> regs = new ArrayList<>(registrations.values());
      boolean wanted = false;
      int cap = onlyIds == null ? Integer.MAX_VALUE : onlyIds.size();
      boolean onlyFilled =
          refill
              && onlyIds == null
              && regs.stream().anyMatch(r -> r.filledLastClaim && !paused.contains(r.bizType));
      if (!onlyFilled && onlyIds == null) {
        lastFairNanos = System.nanoTime();
      }
      long active =
          regs.stream()
              .filter(r -> !paused.contains(r.bizType) && (!onlyFilled || r.filledLastClaim))
              .count();
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
        if (onlyFilled && !reg.filledLastClaim) {
          continue;
        }
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
        limits.add(
            new ClaimRequest.TypeLimit(
                reg.bizType, n, reg.config.ordered(), reg.config.maxAttempts()));
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
      return handOut(limits, reserved, rows, t0, started, onlyIds == null);
    } finally {
      claimLock.unlock();
    }
  }

  /**
   * Runs what was claimed. Every slot reserved for the claim is accounted for on every path: a slot
   * not used by a claimed ticket is given back, a row that cannot be decoded goes DEAD with the
   * reason and gives its slot back, and if anything fails before a ticket reached a worker, its
   * slot is given back and its lease released (with the attempt) so it is due again at once.
   */
  private ClaimResult handOut(
      List<ClaimRequest.TypeLimit> limits,
      Map<String, Integer> reserved,
      List<ClaimedRow> rows,
      long claimStart,
      List<Execution> started,
      boolean general) {
    Duration queryTime = Duration.ofNanos(lastClaimNanos);
    Map<String, List<ClaimedRow>> byType = new LinkedHashMap<>();
    for (ClaimedRow row : rows) {
      byType.computeIfAbsent(row.bizType(), t -> new ArrayList<>()).add(row);
    }
    Map<String, Integer> unhanded = new HashMap<>(reserved);
    Set<ClaimedRow> pendingRows =
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    pendingRows.addAll(rows);
    boolean full = false;
    try {
      for (ClaimRequest.TypeLimit limit : limits) {
        List<ClaimedRow> got = byType.getOrDefault(limit.bizType(), List.of());
        Registration reg = registrations.get(limit.bizType());
        int unused = limit.limit() - got.size();
        if (unused > 0) {
          give(reg, unused, unhanded);
        } else {
          full = true;
        }
        if (general) {
          reg.filledLastClaim = unused <= 0;
        }
        List<ClaimedMessage> runnable = new ArrayList<>(got.size());
        int reclaims = 0;
        for (ClaimedRow row : got) {
          ClaimedMessage m;
          try {
            m = new ClaimedMessage(row, claimStart, leaseNanos);
          } catch (RuntimeException undecodable) {
            pendingRows.remove(row);
            give(reg, 1, unhanded);
            bury(row, claimStart, undecodable);
            continue;
          }
          runnable.add(m);
          if (row.leaseExpired()) {
            reclaims++;
            log.info(
                "event=lease_reclaimed biz_type={} id={} idem_key={} attempt={}",
                m.bizType(),
                m.id(),
                m.idemKey(),
                m.attempt());
          }
        }
        if (!got.isEmpty()) {
          int r = reclaims;
          int n = got.size();
          safe(() -> listener.claimed(limit.bizType(), n, r, queryTime));
        }
        if (!runnable.isEmpty()) {
          submit(reg, runnable, started, unhanded, pendingRows);
        }
      }
    } finally {
      if (!pendingRows.isEmpty()) {
        // something failed between the claim and the workers: do not leave these leased for a
        // whole lease with their attempt spent
        for (ClaimedRow row : pendingRows) {
          writer.submit(
              new WriteItem(
                  row.bizType(),
                  row.id(),
                  row.version(),
                  new Transition(
                      row.id(), row.version(), 0, 0, "not started: released by the claim", -1),
                  () -> {},
                  claimStart + leaseNanos - writeBackMarginNanos));
        }
        log.error(
            "event=claim_handout_failed tickets={} note=released, due again at once",
            pendingRows.size());
      }
      unhanded.forEach(
          (type, n) -> {
            if (n > 0) {
              registrations.get(type).slots.release(n);
              totalSlots.release(n);
            }
          });
    }
    return new ClaimResult(rows.size(), full, false);
  }

  /** Gives back {@code n} reserved slots of {@code reg} that no ticket will use. */
  private void give(Registration reg, int n, Map<String, Integer> unhanded) {
    unhanded.merge(reg.bizType, -n, Integer::sum);
    reg.slots.release(n);
    totalSlots.release(n);
  }

  /** A claimed row the engine cannot read: DEAD with the reason, never a stalled replica. */
  private void bury(ClaimedRow row, long claimStart, RuntimeException why) {
    String reason =
        Texts.sanitize(
            "cannot decode the ticket: " + why.getMessage(), OutcomePolicy.MAX_ERROR_LENGTH);
    log.warn(
        "event=undecodable_ticket biz_type={} id={} idem_key={} error={}",
        row.bizType(),
        row.id(),
        Texts.sanitize(row.idemKey(), 128),
        reason);
    writer.submit(
        new WriteItem(
            row.bizType(),
            row.id(),
            row.version(),
            new Transition(row.id(), row.version(), 2, 0, reason, 0),
            () -> {},
            claimStart + leaseNanos - writeBackMarginNanos));
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

  /**
   * Hands the tickets to the workers. A ticket's slot belongs to its execution from here on (given
   * back in {@link #finished}); a ticket the pool refuses (closing) stays in {@code pendingRows}
   * and {@code unhanded}, which the caller releases.
   */
  private void submit(
      Registration reg,
      List<ClaimedMessage> got,
      List<Execution> started,
      Map<String, Integer> unhanded,
      Set<ClaimedRow> pendingRows) {
    int chunk = reg.isBatch() ? reg.config.batchSize() : 1;
    for (int i = 0; i < got.size(); i += chunk) {
      List<ClaimedMessage> part = List.copyOf(got.subList(i, Math.min(got.size(), i + chunk)));
      Execution[] self = new Execution[1];
      Execution e = new Execution(reg, part, this::decided, () -> finished(self[0]));
      self[0] = e;
      inFlight.add(e);
      try {
        workers.execute(e);
      } catch (RuntimeException rejected) {
        inFlight.remove(e);
        e.abandon();
        e.written.complete(null);
        continue;
      }
      unhanded.merge(reg.bizType, -part.size(), Integer::sum);
      for (ClaimedMessage m : part) {
        pendingRows.remove(m.row());
      }
      if (started != null) {
        started.add(e);
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

  private void decided(
      Execution e, List<Outcome> outcomes, Execution.Ending ending, Duration took) {
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
      if (m.fenced()) {
        // taken over while this replica's lease had run out: the other delivery owns the ticket
        log.info(
            "event=fenced_outcome_dropped biz_type={} id={} idem_key={} attempt={}",
            m.bizType(),
            m.id(),
            m.idemKey(),
            m.attempt());
        onWritten.run();
        continue;
      }
      Outcome outcome = outcomes.get(i);
      OutcomePolicy.Decision d;
      if (ending == Execution.Ending.SHUTDOWN && outcome.type() != Outcome.Type.SUCCESS) {
        d =
            policy.givenBack(
                m.row(), "interrupted by the shutdown of replica " + settings.replicaId());
      } else {
        d =
            policy.decide(
                e.registration.config,
                m.row(),
                outcome,
                ending == Execution.Ending.TIMED_OUT,
                took);
      }
      logDecision(m, d);
      if (d.result() != null) {
        Duration sinceCreated = Duration.between(m.createdAt(), m.row().dbNow()).plus(took);
        safe(() -> listener.delivered(m.bizType(), d.result(), m.attempt(), took, sinceCreated));
      }
      writer.submit(
          new WriteItem(
              m.bizType(),
              m.id(),
              m.row().version(),
              d.transition(),
              onWritten,
              m.leaseEndNanos() - writeBackMarginNanos));
    }
  }

  private static void logDecision(ClaimedMessage m, OutcomePolicy.Decision d) {
    if (d.result() == null) {
      log.info(
          "event=attempt_given_back biz_type={} id={} idem_key={} attempt={} error={}",
          m.bizType(),
          m.id(),
          m.idemKey(),
          m.attempt(),
          d.error());
      return;
    }
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
