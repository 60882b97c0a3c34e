package io.localmessage.internal.engine;

import io.localmessage.internal.store.MessageQueue;
import io.localmessage.internal.store.ReservedConnection;
import io.localmessage.spi.EngineListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of running handlers alive: once a third of a lease has passed, the lease of
 * every message whose handler is still running, or whose outcome still waits in the write-back
 * queue, is extended to a full lease again, version-checked, in one statement for all of them. So a
 * lease can be short (a crashed replica's messages come back soon) whatever the handlers' timeouts,
 * a handler that outlives its timeout still holds its message until its thread leaves, and a
 * finished run holds it until its outcome is written: a backed-up writer never lets another replica
 * run a message whose outcome is on its way.
 *
 * <p>Renewals run on a connection the renewer keeps for itself while executions are in flight
 * (borrowed before the first of them starts, given back after a lease without any, borrowed again
 * after a failure): handlers that do database work on the same pool can take every other
 * connection, and a renewal still never waits for one. A lease lost because the renewal had to wait
 * would let another replica run the message beside the handler still inside it.
 *
 * <p>A renewal that finds a message's version changed means the message was cancelled or taken over
 * (this replica's lease ran out, for example while it was frozen or cut off from the database): the
 * execution is fenced, its outcome will be dropped, and the handler is interrupted. Renewal stops
 * at {@code maxExecutionTime} after the handler started, so neither a wedged thread nor an outcome
 * the writer cannot write can hold a message forever: its lease then runs out and another replica
 * may run the message.
 */
final class LeaseRenewer {
  private static final Logger log = LoggerFactory.getLogger(LeaseRenewer.class);
  private static final int MAX_PER_STATEMENT = 1000;

  private final MessageQueue queue;
  // the renewer's own connection: a renewal never waits behind the handlers' use of the pool
  private final ReservedConnection connection;
  private final Collection<Execution> inFlight;
  // executions whose thread has left, with outcomes not yet written
  private final Collection<Execution> unwritten;
  private final EngineListener listener;
  private final LoopHealth health;
  private final long leaseNanos;
  private final long renewAfterNanos;
  private final long maxExecutionNanos;
  private final Ticker ticker;
  private long lastBusyNanos; // renewer thread only

  LeaseRenewer(
      MessageQueue queue,
      ReservedConnection connection,
      Collection<Execution> inFlight,
      Collection<Execution> unwritten,
      EngineListener listener,
      LoopHealth health,
      Duration lease,
      Duration maxExecutionTime,
      Ticker ticker) {
    this.ticker = ticker;
    this.lastBusyNanos = ticker.nanos();
    this.queue = queue;
    this.connection = connection;
    this.inFlight = inFlight;
    this.unwritten = unwritten;
    this.listener = listener;
    this.health = health;
    this.leaseNanos = lease.toNanos();
    this.renewAfterNanos = leaseNanos / 3;
    this.maxExecutionNanos = maxExecutionTime.toNanos();
  }

  /** How often {@link #renewDue()} should run: a sixth of the lease, 20 ms to 1 s. */
  static Duration tick(Duration lease) {
    return Duration.ofMillis(Math.max(20, Math.min(1000, lease.toMillis() / 6)));
  }

  /** One round: renews every lease that is a third used, fences what was taken over. */
  void renewDue() {
    try {
      long now = ticker.nanos();
      List<ClaimedMessage> due = new ArrayList<>();
      Map<ClaimedMessage, Execution> owner = new LinkedHashMap<>();
      for (Execution e : inFlight) {
        if (e.inside()) {
          dueUnlessPastCap(e, now, due, owner);
        }
      }
      for (Execution e : unwritten) {
        if (!e.written.isDone()) {
          // the same cap: an outcome the writer cannot write for that long (a write-back the
          // database keeps refusing while renewals pass) must not hold its message for ever
          dueUnlessPastCap(e, now, due, owner);
        }
      }
      RuntimeException failure = null;
      for (int i = 0; i < due.size(); i += MAX_PER_STATEMENT) {
        RuntimeException f =
            renew(due.subList(i, Math.min(due.size(), i + MAX_PER_STATEMENT)), owner);
        failure = failure == null ? f : failure;
      }
      if (!inFlight.isEmpty() || !unwritten.isEmpty()) {
        lastBusyNanos = now;
      } else if (now - lastBusyNanos > leaseNanos && connection.held()) {
        connection.release(); // a lease without executions: the pool gets it back until the next
      }
      if (failure == null) {
        health.success();
      } else {
        health.failure(failure); // each failed statement is logged and counted by renew()
      }
    } catch (Throwable t) {
      health.failure(t);
      log.warn("event=lease_renewal_failed error={}", Threads.describe(t));
    }
  }

  /**
   * The messages of a started execution that are due, unless {@code maxExecutionTime} has passed
   * since its handler started.
   */
  private void dueUnlessPastCap(
      Execution e, long now, List<ClaimedMessage> due, Map<ClaimedMessage, Execution> owner) {
    if (e.pastCap(now, maxExecutionNanos)) {
      if (e.pastCapFirstTime(now, maxExecutionNanos)) {
        log.error(
            "event=renewal_cap_reached biz_type={} ids={} max_execution_time={}"
                + " note=the lease is no longer renewed; another replica may run these messages"
                + " when it ends",
            e.registration.bizType,
            e.ids(),
            Duration.ofNanos(maxExecutionNanos));
      }
      return;
    }
    for (ClaimedMessage m : e.messages) {
      if (!m.fenced() && now - m.renewedAtNanos() >= renewAfterNanos) {
        due.add(m);
        owner.put(m, e);
      }
    }
  }

  /**
   * A renewal statement failed: says so per type, with how much of the lease is left, before the
   * lease is lost (renewals start at a third of it), and counts it; the next tick tries again.
   */
  private void failed(List<ClaimedMessage> batch, long now, RuntimeException e) {
    Map<String, List<ClaimedMessage>> byType = new LinkedHashMap<>();
    for (ClaimedMessage m : batch) {
      byType.computeIfAbsent(m.bizType(), t -> new ArrayList<>()).add(m);
    }
    byType.forEach(
        (type, ms) -> {
          long leftMillis =
              ms.stream().mapToLong(m -> m.renewedAtNanos() + leaseNanos - now).min().orElse(0)
                  / 1_000_000;
          log.error(
              "event=lease_renewal_failed biz_type={} ids={} lease_left_ms={} error={}"
                  + " note=tried again at the next tick; if the lease runs out, another replica may"
                  + " run these messages",
              type,
              ms.stream().map(ClaimedMessage::id).toList(),
              Math.max(0, leftMillis),
              Threads.describe(e));
          Threads.safe(() -> listener.leaseRenewalFailed(type, ms.size()));
        });
  }

  /** Renews one statement's worth; returns its failure (logged and counted), null when it ran. */
  private RuntimeException renew(List<ClaimedMessage> batch, Map<ClaimedMessage, Execution> owner) {
    long[] ids = new long[batch.size()];
    long[] versions = new long[batch.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = batch.get(i).id();
      versions[i] = batch.get(i).row().version();
    }
    long start = ticker.nanos();
    Set<Long> matched;
    try {
      matched = queue.renewLeases(connection, ids, versions, leaseNanos / 1_000_000);
    } catch (RuntimeException e) {
      failed(batch, start, e);
      return e;
    }
    Map<String, int[]> counts = new LinkedHashMap<>();
    for (ClaimedMessage m : batch) {
      int[] c = counts.computeIfAbsent(m.bizType(), t -> new int[2]);
      if (matched.contains(m.id())) {
        m.renewed(start, leaseNanos);
        c[0]++;
        continue;
      }
      Execution e = owner.get(m);
      if (!e.inside()) {
        // the thread left while the statement ran, and its outcome may already be written (the
        // row gone or changed by it): the write-back's own version check decides, not a fence
        continue;
      }
      m.fence();
      c[1]++;
      log.warn(
          "event=fenced biz_type={} id={} idem_key={} attempt={}"
              + " note=cancelled or taken over after this replica's lease ran out; its outcome"
              + " will be dropped",
          m.bizType(),
          m.id(),
          m.idemKey(),
          m.attempt());
      if (e.messages.stream().allMatch(ClaimedMessage::fenced)) {
        e.interruptFenced();
      }
    }
    counts.forEach(
        (type, c) -> {
          if (c[0] > 0) {
            Threads.safe(() -> listener.leaseRenewed(type, c[0]));
          }
          if (c[1] > 0) {
            Threads.safe(() -> listener.fenced(type, c[1]));
          }
        });
    return null;
  }
}
