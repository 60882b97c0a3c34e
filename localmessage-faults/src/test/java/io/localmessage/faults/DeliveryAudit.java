package io.localmessage.faults;

import io.localmessage.testing.Sql;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Reads the record of every delivery (fx_exec, written by the workers) and of every claim
 * (lm_claims, written by a trigger on the ticket table) after a run, and checks them against what
 * the suite did to each replica. End-state checks alone cannot see most engine bugs: the inbox
 * hides a second delivery; this record does not.
 */
final class DeliveryAudit {
  private DeliveryAudit() {}

  /** A delivery as the worker recorded it; {@code end} is -1 when it never recorded one. */
  record Exec(
      String nonce,
      String key,
      String bizType,
      String replica,
      int attempt,
      int maxAttempts,
      long start,
      long end,
      String outcome) {
    long duration() {
      return end < 0 ? -1 : end - start;
    }
  }

  /** A claim as the trigger logged it (database clock, epoch ms). */
  record Claim(
      long ticketId,
      String key,
      String oldOwner,
      String newOwner,
      int oldAttempts,
      int newAttempts,
      int maxAttempts,
      long at,
      long oldLeaseEnd) {}

  /** Counts, each failure class with a few samples. */
  static final class Result {
    long deliveries;
    long okDeliveries;
    long unfinished;
    long claims;
    // failures (each asserted 0)
    long reexecAfterOk;
    long reexecAfterOkAroundOutage;
    long overlaps;
    long attemptNotIncreasing;
    long attemptOverMax;
    long attemptBurnedByStop;
    long claimsOfLiveLease;
    long claimsNotCountingAttempt;
    long takeoverOfLiveOwner;
    // ordered type: failures (each asserted 0)
    long orderedOutOfOrder;
    long orderedAggregateOverlaps;
    // ordered type: counts and what is explained
    long orderedDeliveries;
    long orderedAggregates;
    long orderedAggregateOverlapsOnFrozen;
    // explained
    long reexecAfterOkOfKilledOrFrozen;
    long reexecAfterOkDroppedByStop;
    long reexecAfterOkLongOutage;
    long overlapsOnFrozen;
    long overlapsCutOff;
    long attemptsGivenBackByStop;
    final Map<String, Long> takeoversByCause = new HashMap<>();
    // faults that fired
    long hangsIgnoringInterruptsPastTimeout;
    long hangsInterrupted;
    long longHandlersPastLease;
    long nulErrors;
    long poisonDeadWithReason;
    final List<String> samples = new ArrayList<>();

    void sample(String s) {
      if (samples.size() < 25) {
        samples.add(s);
      }
    }

    long takeovers(String cause) {
      return takeoversByCause.getOrDefault(cause, 0L);
    }

    String describe() {
      return String.format(
          "deliveries=%d ok=%d unfinished=%d claims=%d | FAILURES: re-executions after ok=%d"
              + " (around an outage: %d) overlapping deliveries=%d attempts not increasing=%d"
              + " over max=%d burned by a graceful stop=%d claims of a live lease=%d claims not"
              + " counting the attempt=%d takeovers of a live owner=%d | explained:"
              + " re-executions after ok of killed/frozen=%d of a stop=%d of an outage longer than"
              + " the lease allows=%d overlaps on frozen=%d on a replica cut off=%d attempts"
              + " given back by a stop=%d takeovers by cause=%s | fired: hangs ignoring"
              + " interrupts past the timeout=%d interrupted hangs=%d long handlers past the"
              + " lease=%d nul errors=%d poison rows DEAD with a reason=%d | ordered: deliveries=%d"
              + " aggregates=%d FAILURES: out of commit order=%d two of an aggregate in flight=%d"
              + " | explained: in flight on a frozen replica=%d%s",
          deliveries,
          okDeliveries,
          unfinished,
          claims,
          reexecAfterOk,
          reexecAfterOkAroundOutage,
          overlaps,
          attemptNotIncreasing,
          attemptOverMax,
          attemptBurnedByStop,
          claimsOfLiveLease,
          claimsNotCountingAttempt,
          takeoverOfLiveOwner,
          reexecAfterOkOfKilledOrFrozen,
          reexecAfterOkDroppedByStop,
          reexecAfterOkLongOutage,
          overlapsOnFrozen,
          overlapsCutOff,
          attemptsGivenBackByStop,
          new java.util.TreeMap<>(takeoversByCause),
          hangsIgnoringInterruptsPastTimeout,
          hangsInterrupted,
          longHandlersPastLease,
          nulErrors,
          poisonDeadWithReason,
          orderedDeliveries,
          orderedAggregates,
          orderedOutOfOrder,
          orderedAggregateOverlaps,
          orderedAggregateOverlapsOnFrozen,
          samples.isEmpty() ? "" : "\n    samples:\n      " + String.join("\n      ", samples));
    }
  }

  static Result check(
      DataSource tickets,
      DataSource effects,
      List<FaultRun.Worker> workerList,
      FaultRun.Phases ph) {
    Map<String, FaultRun.Worker> workers = new HashMap<>();
    for (FaultRun.Worker w : workerList) {
      workers.put(w.replica, w);
    }
    Result r = new Result();
    List<Claim> claims = loadClaims(tickets);
    Map<String, List<Claim>> claimsByKey = new HashMap<>();
    for (Claim c : claims) {
      claimsByKey.computeIfAbsent(c.key(), k -> new ArrayList<>()).add(c);
    }
    Map<String, List<Exec>> byTicket = new HashMap<>();
    List<Exec> execs = loadExecs(effects);
    checkOrdered(r, execs, claimsByKey, workers);
    for (Exec e : execs) {
      byTicket.computeIfAbsent(e.bizType() + "/" + e.key(), k -> new ArrayList<>()).add(e);
      r.deliveries++;
    }
    long lease = FaultWorker.LEASE.toMillis();
    long margin = FaultWorker.WRITE_BACK_MARGIN.toMillis();
    // the least lease a running handler has left at any moment: renewed once a third has passed,
    // by a renewer that looks every sixth of the lease (at most every second)
    long renewedLeaseLeft = lease - lease / 3 - Math.min(1_000, lease / 6);
    for (List<Exec> list : byTicket.values()) {
      list.sort(Comparator.comparingLong(Exec::start).thenComparing(Exec::nonce));
      for (int i = 0; i < list.size(); i++) {
        Exec d = list.get(i);
        FaultRun.Worker w = workers.get(d.replica());
        long effEnd = effectiveEnd(d, w);
        if (d.end() < 0 && (w == null || w.killedMs < 0)) {
          r.unfinished++;
        }
        countFired(r, d);
        if (d.attempt() > d.maxAttempts()) {
          r.attemptOverMax++;
          r.sample("over max attempts: " + d);
        }
        boolean ok = isOk(d);
        r.okDeliveries += ok ? 1 : 0;
        if (ok && i + 1 < list.size()) {
          // An "ok" outcome reaches the database unless the replica dies, freezes or is cut off
          // before its write-back lands; the writer retries until the lease end minus the margin
          // (lease 8 s, margin 0.5 s), so a fault later than the lease after the end is no excuse.
          long windowEnd = d.end() + lease + 1_000;
          Exec next = list.get(i + 1);
          // a replica frozen up to a lease before the start may have held the claim across the
          // freeze: its handler then ran on a lease that had already ended
          // (a held write-back is the same from the database's side: the outcome arrives late)
          if (w != null
              && (within(w.killedMs, d.start(), windowEnd)
                  || within(w.frozenFromMs, d.start() - lease, windowEnd)
                  || within(w.heldFromMs, d.start() - lease, windowEnd))) {
            r.reexecAfterOkOfKilledOrFrozen++;
          } else if (w != null && w.stopMs >= 0 && w.stopMs <= d.end()) {
            // still inside when its replica's shutdown gave up on it: the lease is kept until
            // its end, the attempt given back, and the late success dropped by design (the
            // suite notes the stop before the worker reads it, so a delivery its engine started
            // in between counts too)
            r.reexecAfterOkDroppedByStop++;
          } else if (outageWithin(ph, d.start(), d.end() + lease, lease - margin - 1_000)) {
            // cut off longer than the lease allows (a slow server restart): the lease ran out
            // during the outage, and the outcome is dropped by design
            r.reexecAfterOkLongOutage++;
          } else if (d.duration() > lease / 3
              && outageWithin(ph, d.start(), d.end() + lease, renewedLeaseLeft - margin)) {
            // a delivery that ran past a third of its lease lives on renewals, made once a third
            // of the lease has passed and checked every sixth (at most 1 s): when an outage
            // begins its lease may have only renewedLeaseLeft to run, so an outage longer than
            // that minus the margin may outlast it, and the outcome is dropped by design
            r.reexecAfterOkLongOutage++;
          } else if (outageWithin(ph, d.start(), d.end() + lease, 0)) {
            // an outage shorter than the lease minus the margin (the 5 s proxy cut): renewals and
            // the retried write-back must land, so the bound is 0; counted apart from the rest
            r.reexecAfterOkAroundOutage++;
            r.sample("re-executed after ok around an outage: " + d + " then " + next);
          } else {
            r.reexecAfterOk++;
            r.sample(
                "re-executed after ok: "
                    + d
                    + " then "
                    + next
                    + fate(w, d.end())
                    + claimsOf(claimsByKey.get(d.key()), d.end()));
          }
        }
        for (int j = i + 1; j < list.size(); j++) {
          Exec later = list.get(j);
          if (later.start() >= effEnd) {
            continue;
          }
          // A live execution keeps its lease (renewed while its thread is inside the handler),
          // so no other delivery may start before it ends: bound 0. Only a frozen replica, or one
          // cut off from the database, cannot renew; its late outcome must then be dropped
          // (asserted by the freeze phase; the version check drops it).
          if (w != null && within(w.frozenFromMs, d.start() - lease, effEnd)) {
            r.overlapsOnFrozen++;
          } else if (outageWithin(ph, d.start(), later.start(), renewedLeaseLeft - margin)) {
            // cut off from the database while it ran: renewed once a third of the lease has
            // passed and checked every sixth (at most 1 s), its lease may have had only
            // renewedLeaseLeft to run when the outage began, and an outage that long lets it run
            // out (the takeover counts as "cut off"); the renewer fences and interrupts the
            // handler as soon as it reaches the database again
            r.overlapsCutOff++;
          } else {
            r.overlaps++;
            r.sample(
                "overlap: "
                    + d
                    + " with "
                    + later
                    + fate(w, d.start())
                    + claimsOf(claimsByKey.get(d.key()), d.start()));
          }
        }
        if (i + 1 < list.size()) {
          Exec next = list.get(i + 1);
          // a stop gives back the attempt of any delivery that had not ended when it came
          // (one its engine started between the suite's note of the stop and the worker's read)
          boolean stoppedInside = w != null && w.stopMs >= 0 && w.stopMs <= effEnd;
          // attempts are counted at claim: each later delivery has a higher attempt, except that
          // a graceful stop gives back the attempt of an execution it interrupted (bound: equal)
          if (next.attempt() > d.attempt()) {
            if (stoppedInside
                && FaultWorker.isLong(d.bizType())
                && "long-interrupted".equals(d.outcome())) {
              // a long handler only a graceful stop interrupts (its timeout is far longer)
              r.attemptBurnedByStop++;
              r.sample("attempt burned by a graceful stop: " + d + " then " + next);
            }
          } else if (next.attempt() == d.attempt() && stoppedInside) {
            r.attemptsGivenBackByStop++;
          } else {
            r.attemptNotIncreasing++;
            r.sample("attempt not increasing: " + d + " then " + next);
          }
        }
      }
    }
    for (Claim c : claims) {
      r.claims++;
      if (ofLiveLease(c)) {
        r.claimsOfLiveLease++;
        r.sample("claim of a live lease: " + c);
      }
      if (c.newAttempts() != c.oldAttempts() + 1 || c.newAttempts() > c.maxAttempts()) {
        r.claimsNotCountingAttempt++;
        r.sample("claim not counting its attempt: " + c);
      }
      if (c.oldOwner() != null) {
        String cause = takeoverCause(c, workers.get(c.oldOwner()), ph, lease);
        r.takeoversByCause.merge(cause, 1L, Long::sum);
        if (cause.equals("live owner")) {
          r.takeoverOfLiveOwner++;
          r.sample("takeover of a live owner: " + c);
        }
      }
    }
    r.poisonDeadWithReason =
        Sql.count(
            tickets,
            "SELECT COUNT(*) FROM "
                + FaultWorker.TABLE
                + " WHERE idem_key LIKE 'poison-%' AND status = 2 AND last_error IS NOT NULL"
                + " AND last_error <> ''");
    return r;
  }

  /**
   * The ordered type, aggregate by aggregate. Its keys in ticket id order are the order their saves
   * committed in (the save locks the aggregate before the insert takes its id). Two rules:
   *
   * <ul>
   *   <li>In order: no delivery of a ticket starts before its predecessor in the aggregate has
   *       succeeded. The successor is claimable only once the predecessor's row is gone, deleted by
   *       the write-back of an ok delivery, which ended before its write-back: the earliest ok end
   *       of the predecessor is a lower bound of the successor's first start (bound 0 below it). A
   *       predecessor delivery whose end was never recorded (its replica was killed) may have been
   *       the one that succeeded: its start is then the bound.
   *   <li>Never two of an aggregate in flight: no delivery of one ticket overlaps a delivery of
   *       another ticket of the same aggregate (bound 0), except on a frozen replica, which cannot
   *       renew the lease it holds, so its handler may still be inside when the ticket was taken
   *       over and its successor ran (counted apart; its late outcome is dropped).
   * </ul>
   */
  private static void checkOrdered(
      Result r,
      List<Exec> execs,
      Map<String, List<Claim>> claimsByKey,
      Map<String, FaultRun.Worker> workers) {
    long lease = FaultWorker.LEASE.toMillis();
    Map<String, List<Exec>> byAggregate = new HashMap<>();
    for (Exec e : execs) {
      if (FaultWorker.ORDERED_TYPE.equals(e.bizType())) {
        byAggregate
            .computeIfAbsent(FaultWorker.aggregateOf(e.key()), a -> new ArrayList<>())
            .add(e);
        r.orderedDeliveries++;
      }
    }
    r.orderedAggregates = byAggregate.size();
    for (Map.Entry<String, List<Exec>> aggregate : byAggregate.entrySet()) {
      Map<String, List<Exec>> byKey = new HashMap<>();
      Map<String, Long> ticketId = new HashMap<>();
      for (Exec e : aggregate.getValue()) {
        byKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
        for (Claim c : claimsByKey.getOrDefault(e.key(), List.of())) {
          ticketId.merge(e.key(), c.ticketId(), Math::min);
        }
      }
      List<String> keys = new ArrayList<>(ticketId.keySet());
      keys.sort(Comparator.comparingLong(ticketId::get));
      for (int i = 0; i + 1 < keys.size(); i++) {
        String head = keys.get(i);
        String next = keys.get(i + 1);
        long bound = Long.MAX_VALUE;
        for (Exec h : byKey.get(head)) {
          if (isOk(h)) {
            bound = Math.min(bound, h.end());
          } else if (h.end() < 0) {
            bound = Math.min(bound, h.start());
          }
        }
        long nextStart =
            byKey.get(next).stream().mapToLong(Exec::start).min().orElse(Long.MAX_VALUE);
        if (nextStart < bound) {
          r.orderedOutOfOrder++;
          r.sample(
              "out of commit order in "
                  + aggregate.getKey()
                  + ": "
                  + next
                  + " (ticket "
                  + ticketId.get(next)
                  + ") started at "
                  + nextStart
                  + " before "
                  + head
                  + " (ticket "
                  + ticketId.get(head)
                  + ") had succeeded ("
                  + (bound == Long.MAX_VALUE ? "never" : bound)
                  + ")");
        }
      }
      List<Exec> list = new ArrayList<>(aggregate.getValue());
      list.sort(Comparator.comparingLong(Exec::start).thenComparing(Exec::nonce));
      for (int i = 0; i < list.size(); i++) {
        Exec d = list.get(i);
        FaultRun.Worker w = workers.get(d.replica());
        long effEnd = effectiveEnd(d, w);
        for (int j = i + 1; j < list.size() && list.get(j).start() < effEnd; j++) {
          Exec later = list.get(j);
          if (later.key().equals(d.key())) {
            continue; // one ticket's own deliveries: the per-ticket check above
          }
          if (w != null && within(w.frozenFromMs, d.start() - lease, effEnd)) {
            r.orderedAggregateOverlapsOnFrozen++;
          } else {
            r.orderedAggregateOverlaps++;
            r.sample("two of " + aggregate.getKey() + " in flight: " + d + " with " + later);
          }
        }
      }
    }
  }

  /**
   * Whether a claim took a ticket whose lease had not ended. A claim takes only a due ticket by the
   * clock of its own statement, which the log records: a lease end later than that (beyond the
   * millisecond rounding of the columns) means a live lease was ignored.
   */
  static boolean ofLiveLease(Claim c) {
    return c.oldLeaseEnd() > c.at() + 5;
  }

  /**
   * Why a ticket's previous owner lost it. Killed, frozen or stopped replicas lose their leases by
   * design (a stopped one keeps the lease of a handler still inside until it ends); a replica cut
   * off from the database during an outage cannot renew or write back. Any other previous owner was
   * alive and holding its lease: a failure.
   */
  private static String takeoverCause(
      Claim c, FaultRun.Worker owner, FaultRun.Phases ph, long lease) {
    if (owner == null) {
      return "live owner";
    }
    if (owner.killedMs >= 0 && owner.killedMs <= c.at()) {
      return "killed";
    }
    if (owner.frozenFromMs >= 0 && owner.frozenFromMs <= c.at()) {
      return "frozen";
    }
    if (owner.stopMs >= 0 && owner.stopMs <= c.at()) {
      return "stopped";
    }
    if (owner.heldFromMs >= 0 && owner.heldFromMs <= c.at()) {
      return "held write-back"; // the suite held its write-back in the network past the lease
    }
    for (long[] o : ph.outages) {
      // its lease (renewed at the latest one lease before its end) ran during the outage
      if (c.oldLeaseEnd() >= o[0] && c.oldLeaseEnd() - lease <= o[1] + 1_000) {
        return "cut off";
      }
    }
    return "live owner";
  }

  /** What the suite did to a replica, in ms relative to {@code t}, for a failure's sample. */
  private static String fate(FaultRun.Worker w, long t) {
    if (w == null) {
      return " (unknown replica)";
    }
    return String.format(
        " (%s relative to it: started %+d, killed %s, frozen %s..%s, write-back held %s..%s,"
            + " stopped %s)",
        w.replica,
        w.startedMs - t,
        rel(w.killedMs, t),
        rel(w.frozenFromMs, t),
        rel(w.frozenToMs, t),
        rel(w.heldFromMs, t),
        rel(w.heldToMs, t),
        rel(w.stopMs, t));
  }

  /** A ticket's claims relative to {@code t}: when, from whom, to whom, the old lease end. */
  private static String claimsOf(List<Claim> claims, long t) {
    if (claims == null) {
      return " claims: none";
    }
    StringBuilder b = new StringBuilder(" claims:");
    for (Claim c : claims) {
      b.append(
          String.format(
              " [%+d %s->%s attempts %d->%d lease end %+d]",
              c.at() - t,
              c.oldOwner(),
              c.newOwner(),
              c.oldAttempts(),
              c.newAttempts(),
              c.oldLeaseEnd() - t));
    }
    return b.toString();
  }

  private static String rel(long at, long t) {
    return at < 0 ? "-" : String.format("%+d", at - t);
  }

  private static boolean isOk(Exec d) {
    long timeout =
        FaultWorker.isLong(d.bizType())
            ? FaultWorker.LONG_HANDLER_TIMEOUT.toMillis()
            : FaultWorker.HANDLER_TIMEOUT.toMillis();
    // an "ok" that returned after the handler timeout is a timeout to the engine
    boolean ok = "ok".equals(d.outcome()) || "stubborn-ok".equals(d.outcome());
    return ok && d.duration() >= 0 && d.duration() < timeout - 100;
  }

  private static void countFired(Result r, Exec d) {
    long timeout = FaultWorker.HANDLER_TIMEOUT.toMillis();
    switch (d.outcome() == null ? "" : d.outcome()) {
      case "hang-ignored" -> {
        if (d.duration() > timeout) {
          r.hangsIgnoringInterruptsPastTimeout++;
        }
      }
      case "hang-interrupted" -> {
        if (d.duration() >= timeout - 200) {
          r.hangsInterrupted++;
        }
      }
      case "nul-fail" -> r.nulErrors++;
      case "ok" -> {
        if (FaultWorker.isLong(d.bizType()) && d.duration() > FaultWorker.LEASE.toMillis()) {
          r.longHandlersPastLease++;
        }
      }
      default -> {}
    }
  }

  private static long effectiveEnd(Exec d, FaultRun.Worker w) {
    long end = d.end() < 0 ? Long.MAX_VALUE : d.end();
    if (w != null && w.killedMs >= 0) {
      end = Math.min(end, w.killedMs); // a killed process runs nothing after its death
    }
    return end;
  }

  private static boolean within(long t, long from, long to) {
    return t >= 0 && t >= from && t <= to;
  }

  private static boolean outageWithin(FaultRun.Phases ph, long from, long to, long minLength) {
    for (long[] o : ph.outages) {
      if (o[0] <= to && o[1] >= from && o[1] - o[0] >= minLength) {
        return true;
      }
    }
    return false;
  }

  private static List<Exec> loadExecs(DataSource effects) {
    List<Exec> out = new ArrayList<>();
    query(
        effects,
        "SELECT nonce, idem_key, biz_type, replica, attempt, max_attempts, started_ms, ended_ms,"
            + " outcome FROM fx_exec",
        rs -> {
          long ended = rs.getLong(8);
          long end = rs.wasNull() ? -1 : ended; // asked at once: wasNull() tells of the last read
          out.add(
              new Exec(
                  rs.getString(1),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getInt(5),
                  rs.getInt(6),
                  rs.getLong(7),
                  end,
                  rs.getString(9)));
        });
    return out;
  }

  static List<Claim> loadClaims(DataSource tickets) {
    List<Claim> out = new ArrayList<>();
    query(
        tickets,
        "SELECT ticket_id, idem_key, old_owner, new_owner, old_attempts, new_attempts,"
            + " max_attempts, at_ms, old_lease_end_ms FROM lm_claims",
        rs ->
            out.add(
                new Claim(
                    rs.getLong(1),
                    rs.getString(2),
                    rs.getString(3),
                    rs.getString(4),
                    rs.getInt(5),
                    rs.getInt(6),
                    rs.getInt(7),
                    rs.getLong(8),
                    rs.getLong(9))));
    return out;
  }

  private interface Row {
    void accept(ResultSet rs) throws SQLException;
  }

  private static void query(DataSource ds, String sql, Row row) {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        row.accept(rs);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }
}
