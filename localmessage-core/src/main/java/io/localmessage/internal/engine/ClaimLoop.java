package io.localmessage.internal.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The poller: one thread that decides when to claim. It claims at once for messages committed on
 * this replica (after-commit dispatch), on a wake-up from another replica or an operator, when
 * slots come back after a claim that found messages or found no free slot, when a retry this
 * replica wrote falls due, and otherwise every poll interval, adaptively: after a claim that found
 * messages the next comes after a tenth of the interval, and each empty claim doubles the wait back
 * to the interval.
 *
 * <p>A claim that comes back short (fewer messages than it asked for) is not proof that nothing
 * else is due: {@code SKIP LOCKED} passes over rows another session holds at that moment (another
 * replica's claim, an operator's action, a sweep). So only an empty claim with free slots ends the
 * chain; after any claim that found messages, the slots its executions give back start the next
 * claim, and a backlog never waits for the poll interval or its tenth.
 */
final class ClaimLoop {
  private static final Logger log = LoggerFactory.getLogger(ClaimLoop.class);
  // bounds of the extra wait for a fuller claim, see awaitFullerClaim()
  private static final long MIN_GRACE_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
  private static final long MAX_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final Settings settings;
  private final Claimer claimer;
  private final Slots slots;
  private final Signal signal;
  private final LongSupplier avgHandlerNanos;
  private final WakeUps wakeUps;
  private final LoopHealth health;
  private final long minIntervalNanos;
  // the earliest retry this replica wrote that is not claimed yet (a ticker reading,
  // meaningful only while hasDue); guarded by dueLock
  private final Object dueLock = new Object();
  private boolean hasDue;
  // the types of the messages known to be due (guarded by dueLock)
  private final Set<String> dueTypes = new java.util.HashSet<>();
  private long dueNanos;
  private final ConcurrentLinkedQueue<Long> committed = new ConcurrentLinkedQueue<>();
  private volatile boolean wakeRequested;
  private volatile boolean running;
  private volatile boolean stopped;
  private volatile Thread poller;

  ClaimLoop(
      Settings settings,
      Claimer claimer,
      Slots slots,
      Signal signal,
      LongSupplier avgHandlerNanos,
      WakeUps wakeUps) {
    this.settings = settings;
    this.claimer = claimer;
    this.slots = slots;
    this.signal = signal;
    this.avgHandlerNanos = avgHandlerNanos;
    this.wakeUps = wakeUps;
    // adaptive polling: this often while claims keep finding messages, doubling back to the poll
    // interval when they come back empty
    this.minIntervalNanos =
        Math.min(
            settings.pollInterval().toNanos(),
            Math.max(TimeUnit.MILLISECONDS.toNanos(10), settings.pollInterval().toNanos() / 10));
    this.health =
        new LoopHealth(
            "poller",
            settings.ticker(),
            Threads.max(settings.loopStuckAfter(), settings.pollInterval().multipliedBy(3)),
            () -> poller == null || poller.isAlive() || !running,
            () -> running);
  }

  LoopHealth health() {
    return health;
  }

  boolean stopped() {
    return stopped;
  }

  void start() {
    health.success(); // judged from the start, not from when the engine was built
    running = true;
    Thread t = new Thread(this::pollLoop, "lm-poller-" + settings.replicaId());
    t.setDaemon(true);
    poller = t;
    t.start();
  }

  /** Stops claiming: no new claim round starts; waits for the poller thread to end. */
  void stop() {
    markStopped();
    signal.signal();
    join();
  }

  /** Stops claiming without waiting (a crash); {@link #join()} waits. */
  void markStopped() {
    running = false;
    stopped = true;
  }

  void join() {
    Thread t = poller;
    if (t != null) {
      try {
        t.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Messages committed on this replica: claimed here at once when slots are free. */
  void dispatchNow(Collection<Long> ids) {
    if (stopped || ids.isEmpty() || !running) {
      return;
    }
    committed.addAll(ids);
    signal.signal();
  }

  /** Another replica (or an operator) asked for a claim round now. */
  void wake() {
    wakeRequested = true;
    signal.signal();
  }

  /**
   * A message of {@code bizType} this replica knows of becomes due at {@code nanos} (a reading of
   * the engine's ticker): claim then, not a tick later, and offer its type first in that round.
   */
  void dueAt(long nanos, String bizType) {
    synchronized (dueLock) {
      dueTypes.add(bizType);
      // readings are compared by their difference only: the clock's origin is arbitrary
      if (hasDue && nanos - dueNanos >= 0) {
        return;
      }
      hasDue = true;
      dueNanos = nanos;
    }
    signal.signal();
  }

  /**
   * The types of the messages known to be due when a known due time has been reached at {@code now}
   * (and forgets them); null when none has been reached.
   */
  private Set<String> takeDue(long now) {
    synchronized (dueLock) {
      if (hasDue && now - dueNanos >= 0) {
        hasDue = false;
        Set<String> types = Set.copyOf(dueTypes);
        dueTypes.clear();
        return types;
      }
      return null;
    }
  }

  /** How long from {@code now} until the next known due time, at most {@code max}. */
  private long untilDue(long now, long max) {
    synchronized (dueLock) {
      return hasDue ? Math.min(max, dueNanos - now) : max;
    }
  }

  private void pollLoop() {
    // no general round yet: the first one runs at once, whatever the ticker reads (on a
    // machine booted a minute ago it reads about 60 s; 0 is no time in the past)
    boolean ranGeneral = false;
    long lastGeneral = 0;
    long interval = settings.pollInterval().toNanos();
    boolean lastFull = false;
    // Slots.freedCount() when the last general claim started
    long freedAtClaim = 0;
    int failures = 0;
    while (running) {
      try {
        List<Long> ids = drainCommitted();
        if (!ids.isEmpty()) {
          Claimer.Result h = claimer.claim(ids, null, false);
          if (wakeUps != null && h.claimed() < ids.size()) {
            // committed messages this replica cannot run now: let another replica take them
            wakeUps.requestNotify();
          }
        }
        // slots given back since the last general claim, after one that found messages or no free
        // slot: a wait that ended for another reason (an old signal) does not count as one
        boolean slotsCameBack =
            slots.starved() && slots.freedCount() != freedAtClaim && slots.available() > 0;
        long now = settings.ticker().nanos();
        Set<String> dueTypes = takeDue(now);
        boolean dueReached = dueTypes != null;
        boolean woken = wakeRequested;
        boolean full = false;
        if (lastFull
            || slotsCameBack
            || woken
            || dueReached
            || !ranGeneral
            || now - lastGeneral >= interval) {
          wakeRequested = false;
          // a fair round at least every poll interval, and whenever something new may be due;
          // otherwise (a full claim asks for more) refill the types that filled their share
          boolean fair =
              woken
                  || dueReached
                  || claimer.fairRoundDue(now, settings.pollInterval().toNanos())
                  || !(lastFull || slotsCameBack);
          freedAtClaim = slots.freedCount();
          // executions that end while the claim runs wake the poller too: set after the claim,
          // their slots could come back unnoticed until the next poll
          slots.starved(true);
          Claimer.Result r = claimer.claim(null, null, !fair, dueReached ? dueTypes : Set.of());
          lastGeneral = now;
          ranGeneral = true;
          full = r.full();
          slots.claimTook(claimer.lastClaimNanos());
          // a full claim is one that found messages; a short one may have passed over locked rows
          slots.starved(r.noFreeSlots() || r.claimed() > 0);
          interval =
              r.claimed() > 0
                  ? minIntervalNanos
                  : Math.min(settings.pollInterval().toNanos(), interval * 2);
        }
        lastFull = full;
        failures = 0;
        health.success();
        if (!full && committed.isEmpty()) {
          long after = settings.ticker().nanos();
          long wait = untilDue(after, interval - (after - lastGeneral));
          if (wait > 0) {
            await(Duration.ofNanos(wait));
          }
        } else if (full) {
          awaitFullerClaim();
        }
      } catch (Throwable e) {
        // nothing may stop the poller: log, pause, try again
        health.failure(e);
        failures++;
        log.warn(
            "event=poll_failed replica={} failures={} error={}",
            settings.replicaId(),
            failures,
            Threads.describe(e));
        long backoff =
            Math.min(settings.pollInterval().toMillis() << Math.min(failures, 6), 10_000);
        await(Duration.ofMillis(backoff));
      }
    }
  }

  private void await(Duration max) {
    signal.await(max, () -> running);
  }

  /**
   * After a full claim: wait until the wake threshold of slots is free (half of them, fewer for
   * slow handlers, see {@link Slots#wakeThreshold}) or a poll interval passed, then, when handler
   * calls are short, a little longer for the rest, at most as long as the last claim took. Waiting
   * that long costs at most what a second, smaller claim would, and with fast handlers every claim
   * comes back full: one round trip for {@code concurrency} messages instead of two for half as
   * many each. Handlers slower than that wait would not fill the claim anyway; for them the next
   * claim overlaps the calls still running.
   */
  private void awaitFullerClaim() {
    if (slots.belowWakeThreshold(avgHandlerNanos.getAsLong())) {
      await(settings.pollInterval());
    }
    long grace = Math.max(MIN_GRACE_NANOS, Math.min(MAX_GRACE_NANOS, claimer.lastClaimNanos()));
    if (avgHandlerNanos.getAsLong() > grace) {
      return;
    }
    long deadline = settings.ticker().nanos() + grace;
    while (running && committed.isEmpty() && !slots.allFree()) {
      long left = deadline - settings.ticker().nanos();
      if (left <= 0) {
        return;
      }
      await(Duration.ofNanos(left));
    }
  }

  private List<Long> drainCommitted() {
    List<Long> ids = new ArrayList<>();
    Long id;
    while (ids.size() < 1000 && (id = committed.poll()) != null) {
      ids.add(id);
    }
    return ids;
  }
}
