package io.localmessage.internal.engine;

import io.localmessage.internal.store.MessageQueue;
import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.EngineListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One claim round: reserves a fair share of the free slots per unpaused type, claims at most that
 * many due messages in one request, and starts an execution for each (a chunk for a batch handler).
 * The poller, {@code runOnce()} and the after-commit dispatch all claim through here, one round at
 * a time.
 */
final class Claimer {
  private static final Logger log = LoggerFactory.getLogger(Claimer.class);

  private final Settings settings;
  private final MessageQueue queue;
  private final Supplier<Set<String>> pausedSource;
  private final Map<String, Registration> registrations;
  private final Slots slots;
  private final Executions executions;
  private final Outcomes outcomes;
  private final EngineListener listener;
  private final long leaseNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private volatile Set<String> paused = Set.of();
  // when the paused set was read (a ticker reading, meaningful once pausedStale is
  // false); a stale set is read again before the next claim
  private volatile boolean pausedStale = true;
  private volatile long pausedReadAt;
  private volatile long lastClaimNanos;
  // when the last fair claim round ran (every type its share); between fair rounds, a round that
  // only refills after a full claim gives the free slots to the types that filled theirs
  private volatile boolean ranFair;
  private volatile long lastFairNanos;
  private int rotation;

  /**
   * What one round did: messages claimed, whether a type filled its share (claim again at once),
   * whether no type had a free slot.
   */
  record Result(int claimed, boolean full, boolean noFreeSlots) {}

  Claimer(
      Settings settings,
      MessageQueue queue,
      Supplier<Set<String>> pausedSource,
      Map<String, Registration> registrations,
      Slots slots,
      Executions executions,
      Outcomes outcomes,
      EngineListener listener) {
    this.settings = settings;
    this.queue = queue;
    this.pausedSource = pausedSource;
    this.registrations = registrations;
    this.slots = slots;
    this.executions = executions;
    this.outcomes = outcomes;
    this.listener = listener;
    this.leaseNanos = settings.lease().toNanos();
  }

  /** How long the last claim statement took. */
  long lastClaimNanos() {
    return lastClaimNanos;
  }

  /**
   * Whether a fair round is due at {@code now}: none ran yet, or the last one ran at least {@code
   * intervalNanos} before (readings of the engine's ticker compared by their difference).
   */
  boolean fairRoundDue(long now, long intervalNanos) {
    return !ranFair || now - lastFairNanos >= intervalNanos;
  }

  /** Forgets the cached paused set so the next claim reads it again. */
  void invalidatePaused() {
    pausedStale = true;
  }

  /**
   * Claims and starts what fits in the free slots; {@code onlyIds} (not null) restricts the claim
   * to those messages. Executions started are added to {@code started} when it is not null.
   *
   * <p>{@code refill}: the round follows a full claim before the next fair round, and only types
   * that filled their share last time take part (when there are any), sharing every free slot: with
   * many types registered and work in few, a fair round alone hands a busy type {@code free /
   * types} slots per statement and leaves the rest idle until the next round.
   */
  Result claim(List<Long> onlyIds, List<Execution> started, boolean refill) {
    return claim(onlyIds, started, refill, Set.of());
  }

  /**
   * As {@link #claim(List, List, boolean)}, offering the types in {@code first} before the others:
   * the types of retries this replica knows are due. With fewer free slots than types, the fair
   * rotation alone offered a round to types without work and left the due one for a later round, a
   * whole poll interval away.
   */
  Result claim(List<Long> onlyIds, List<Execution> started, boolean refill, Set<String> first) {
    lock.lock();
    try {
      refreshPausedIfStale();
      List<Registration> regs = new ArrayList<>(registrations.values());
      boolean onlyFilled =
          refill
              && onlyIds == null
              && regs.stream().anyMatch(r -> r.filledLastClaim && !paused.contains(r.bizType));
      if (!onlyFilled && onlyIds == null) {
        lastFairNanos = settings.ticker().nanos();
        ranFair = true;
      }
      List<Registration> order = new ArrayList<>(regs.size());
      for (int i = 0; i < regs.size(); i++) {
        order.add(regs.get((i + rotation) % regs.size()));
      }
      rotation++;
      if (!first.isEmpty()) {
        // stable: the due types first, each group in rotation order
        order.sort(java.util.Comparator.comparing(r -> first.contains(r.bizType) ? 0 : 1));
      }
      // With fewer free slots than types, one statement offers only some types. When it comes
      // back short, the slots it left free go at once to the types it did not offer, so a type with
      // work never waits a poll interval behind types without (each type offered once a call).
      Set<String> offered = new java.util.HashSet<>();
      Result total = null;
      while (true) {
        Round r = round(onlyIds, started, onlyFilled, order, offered);
        total =
            total == null
                ? r.result
                : new Result(
                    total.claimed() + r.result.claimed(),
                    total.full() || r.result.full(),
                    r.result.noFreeSlots());
        if (onlyIds != null
            || !r.leftOut
            || r.reserved == 0
            || r.result.claimed() >= r.reserved
            || slots.available() == 0) {
          return total;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** One claim statement: its result, the slots it reserved, whether it left a type out. */
  private record Round(Result result, int reserved, boolean leftOut) {}

  private Round round(
      List<Long> onlyIds,
      List<Execution> started,
      boolean onlyFilled,
      List<Registration> order,
      Set<String> offered) {
    List<ClaimRequest.TypeLimit> limits = new ArrayList<>();
    Map<String, Integer> reserved = new HashMap<>();
    boolean wanted = false;
    boolean leftOut = false;
    int cap = onlyIds == null ? Integer.MAX_VALUE : onlyIds.size();
    long active =
        order.stream()
            .filter(
                r ->
                    !paused.contains(r.bizType)
                        && (!onlyFilled || r.filledLastClaim)
                        && !offered.contains(r.bizType))
            .count();
    // a fair share of the free slots per type, so one busy type cannot starve the others; a
    // type that fills its share makes the poller come back at once for the rest
    int share = active == 0 ? 0 : (int) Math.max(1, (slots.available() + active - 1) / active);
    int total = 0;
    for (Registration reg : order) {
      if (paused.contains(reg.bizType)) {
        continue;
      }
      wanted = true;
      if ((onlyFilled && !reg.filledLastClaim) || offered.contains(reg.bizType)) {
        continue;
      }
      int n =
          Math.min(Math.min(cap, share), Math.min(reg.slots.availablePermits(), slots.available()));
      if (!slots.tryReserve(reg, n)) {
        leftOut = true;
        continue;
      }
      reserved.put(reg.bizType, n);
      offered.add(reg.bizType);
      total += n;
      limits.add(
          new ClaimRequest.TypeLimit(
              reg.bizType, n, reg.config.ordered(), reg.config.maxAttempts()));
    }
    if (limits.isEmpty()) {
      return new Round(new Result(0, false, wanted), 0, leftOut);
    }
    List<ClaimedRow> rows;
    long t0 = settings.ticker().nanos();
    try {
      rows =
          queue.claim(
              new ClaimRequest(limits, settings.lease().toMillis(), settings.replicaId(), onlyIds));
    } catch (RuntimeException e) {
      reserved.forEach((type, n) -> slots.release(registrations.get(type), n));
      throw e;
    }
    lastClaimNanos = settings.ticker().nanos() - t0;
    return new Round(handOut(limits, reserved, rows, t0, started, onlyIds == null), total, leftOut);
  }

  /**
   * Runs what was claimed. Every slot reserved for the claim is accounted for on every path: a slot
   * not used by a claimed message is given back, a row that cannot be decoded goes DEAD with the
   * reason and gives its slot back, and if anything fails before a message reached a worker, its
   * slot is given back and its lease released (with the attempt) so it is due again at once.
   */
  private Result handOut(
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
    Set<ClaimedRow> pendingRows = Collections.newSetFromMap(new IdentityHashMap<>());
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
            outcomes.bury(row, claimStart, undecodable);
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
          Threads.safe(() -> listener.claimed(limit.bizType(), n, r, queryTime));
        }
        if (!runnable.isEmpty()) {
          start(reg, runnable, started, unhanded, pendingRows);
        }
      }
    } finally {
      if (!pendingRows.isEmpty()) {
        // something failed between the claim and the workers: do not leave these leased for a
        // whole lease with their attempt spent
        for (ClaimedRow row : pendingRows) {
          outcomes.release(row, claimStart);
        }
        log.error(
            "event=claim_handout_failed tickets={} note=released, due again at once",
            pendingRows.size());
      }
      unhanded.forEach(
          (type, n) -> {
            if (n > 0) {
              slots.release(registrations.get(type), n);
            }
          });
    }
    return new Result(rows.size(), full, false);
  }

  /**
   * Starts the executions. A message's slot belongs to its execution from here on; a message the
   * pool refuses (closing) stays in {@code pendingRows} and {@code unhanded}, which the caller
   * releases.
   */
  private void start(
      Registration reg,
      List<ClaimedMessage> got,
      List<Execution> started,
      Map<String, Integer> unhanded,
      Set<ClaimedRow> pendingRows) {
    int chunk = reg.isBatch() ? reg.config.batchSize() : 1;
    for (int i = 0; i < got.size(); i += chunk) {
      List<ClaimedMessage> part = List.copyOf(got.subList(i, Math.min(got.size(), i + chunk)));
      Execution e = executions.start(reg, part);
      if (e == null) {
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

  /** Gives back {@code n} reserved slots of {@code reg} that no message will use. */
  private void give(Registration reg, int n, Map<String, Integer> unhanded) {
    unhanded.merge(reg.bizType, -n, Integer::sum);
    slots.release(reg, n);
  }

  private void refreshPausedIfStale() {
    long now = settings.ticker().nanos();
    if (pausedStale || now - pausedReadAt >= settings.pollInterval().toNanos()) {
      // cleared before the read: an invalidation during the read makes the next claim read again
      pausedStale = false;
      paused = pausedSource.get();
      pausedReadAt = now;
    }
  }
}
