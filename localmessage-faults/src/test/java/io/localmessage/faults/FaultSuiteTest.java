package io.localmessage.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The project's central promise under crashes and restarts: nothing lost, nothing applied twice.
 * The short configuration runs in CI; {@code -Dlm.faults.long=true} runs the long one (200,000
 * tickets, PostgreSQL and MariaDB as the ticket store).
 */
@Isolated // nothing alongside: the model checks run two at a time, but not during the chaos
class FaultSuiteTest {
  private static final boolean LONG = Boolean.getBoolean("lm.faults.long");

  /**
   * Tickets of a long run: 200,000 unless {@code -Dlm.faults.tickets} says otherwise (a loaded
   * machine may need fewer to finish within the run's deadline).
   */
  private static final int LONG_TICKETS = Integer.getInteger("lm.faults.tickets", 200_000);

  /** Set on a shared development machine where restarting the database would hurt others. */
  private static final boolean RESTART = !Boolean.getBoolean("lm.faults.noRestart");

  @Test
  void nothingLostNothingAppliedTwiceOnPostgres() throws Exception {
    run(
        TestDatabase.Kind.POSTGRESQL,
        TestDatabase.Kind.MARIADB,
        new FaultRun.Plan(
            LONG ? LONG_TICKETS : 10_000,
            3,
            Duration.ofSeconds(LONG ? 5 : 3),
            true,
            RESTART,
            Duration.ofMinutes(LONG ? 40 : 5),
            true,
            true));
  }

  @Test
  void nothingLostNothingAppliedTwiceOnMariaDb() throws Exception {
    // the short CI run covers PostgreSQL; the long run adds MariaDB as ticket store
    assumeTrue(
        LONG,
        "MariaDB as the ticket store runs in the long fault run only (-Dlm.faults.long=true)");
    run(
        TestDatabase.Kind.MARIADB,
        TestDatabase.Kind.POSTGRESQL,
        new FaultRun.Plan(
            LONG_TICKETS,
            3,
            Duration.ofSeconds(5),
            true,
            RESTART,
            Duration.ofMinutes(40),
            true,
            true));
  }

  @Test
  void withoutTheInboxTheSuiteSeesDoubleEffects() throws Exception {
    FaultRun.Report r;
    try (TestDatabase tickets = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
        TestDatabase effects = TestDatabase.create(TestDatabase.Kind.MARIADB)) {
      r =
          new FaultRun(
                  new FaultRun.Plan(
                      3_000,
                      3,
                      Duration.ofSeconds(2),
                      false,
                      false,
                      Duration.ofMinutes(3),
                      false,
                      false),
                  tickets,
                  effects)
              .run();
    }
    System.out.println("[fault-suite, inbox disabled] " + r.describe());
    assertThat(r.pendingLeft()).isZero();
    assertThat(r.lost()).isZero();
    assertThat(r.doubleApplied()).as("redeliveries apply twice without the inbox").isPositive();
  }

  private static void run(
      TestDatabase.Kind ticketStore, TestDatabase.Kind effectStore, FaultRun.Plan plan)
      throws Exception {
    FaultRun.Report r;
    try (TestDatabase tickets = TestDatabase.create(ticketStore);
        TestDatabase effects = TestDatabase.create(effectStore)) {
      r = new FaultRun(plan, tickets, effects).run();
    }
    System.out.println("[fault-suite " + ticketStore + "] " + r.describe());
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(r.saved()).as("tickets saved").isEqualTo(plan.tickets());
    soft.assertThat(r.pendingLeft()).as("every ticket reached a terminal state").isZero();
    soft.assertThat(r.deadNotByDesign()).as("DEAD only where the suite made it permanent").isZero();
    soft.assertThat(r.dead()).as("DEAD tickets").isEqualTo(r.expectedDead());
    soft.assertThat(r.lost()).as("lost effects").isZero();
    soft.assertThat(r.doubleApplied()).as("double-applied effects").isZero();
    soft.assertThat(r.distinctEffects()).as("distinct effects").isEqualTo(r.expectedEffects());
    soft.assertThat(r.kills()).as("kills").isPositive();
    soft.assertThat(r.events()).as("events saved").isPositive();
    soft.assertThat(r.eventsLost()).as("lost events").isZero();
    soft.assertThat(r.eventsDoubleApplied()).as("double-applied events").isZero();
    soft.assertThat(r.brokerKills()).as("the broker was killed and restarted").isEqualTo(1);
    soft.assertThat(r.consumerKills()).as("the consumer was killed and restarted").isEqualTo(1);
    if (plan.restartDatabase()) {
      soft.assertThat(r.restartDowntimeMs()).as("the database was restarted").isNotZero();
    }
    assertFaultsFired(soft, r);
    assertDeliveryRecord(soft, r.audit());
    soft.assertAll();
  }

  /** Every injected fault fired: a fault that never happened proves nothing. */
  private static void assertFaultsFired(SoftAssertions soft, FaultRun.Report r) {
    FaultRun.Phases p = r.phases();
    DeliveryAudit.Result a = r.audit();
    soft.assertThat(p.problems).as("scripted faults that could not run").isEmpty();
    soft.assertThat(r.kills()).as("SIGKILLs").isGreaterThanOrEqualTo(3);
    soft.assertThat(p.proxyCuts).as("database outages through the proxy").isEqualTo(1);
    soft.assertThat(p.proxyCutConnections).as("connections the outage reset").isPositive();
    soft.assertThat(p.frozenInFlight).as("deliveries in flight on the frozen replica").isPositive();
    soft.assertThat(a.takeovers("frozen"))
        .as("tickets taken over from the frozen replica")
        .isPositive();
    // Deterministic stale write-backs: the frozen replica resumes after its tickets were taken
    // over, so each outcome it then produces is stale and must be dropped by the version check
    // (a CAS conflict, a fenced execution or a write-back given up at its lease end): bound > 0.
    soft.assertThat(p.frozenDropped).as("late outcomes of the frozen replica dropped").isPositive();
    // A stale write-back that reaches the server (held in the network past the lease while the
    // successor took the ticket over) is refused by the version check: a CAS conflict on the
    // replica that sent it (bound > 0), and the ticket stays with its new owner (bound: never
    // deleted while the new owner runs it).
    soft.assertThat(p.heldCasConflicts)
        .as("CAS conflicts of the replica whose write-back arrived after a takeover")
        .isPositive();
    soft.assertThat(p.heldStaleWriteApplied).as("a stale write-back applied").isNull();
    soft.assertThat(a.takeovers("held write-back"))
        .as("tickets taken over while their write-back was held")
        .isPositive();
    soft.assertThat(p.gracefulStops.get()).as("mid-run graceful stops").isGreaterThanOrEqualTo(3);
    soft.assertThat(p.gracefulStopsWithInFlight.get())
        .as("mid-run graceful stops with handlers in flight")
        .isPositive();
    soft.assertThat(p.gracefulStopsWithLongInFlight.get())
        .as("mid-run graceful stops with a long handler in flight")
        .isPositive();
    soft.assertThat(p.gracefulStopsWithHandlerStillInside.get())
        .as("mid-run graceful stops with a handler still inside after the shutdown timeout")
        .isPositive();
    soft.assertThat(a.hangsIgnoringInterruptsPastTimeout)
        .as("handlers that hung past the timeout ignoring interrupts")
        .isPositive();
    soft.assertThat(a.hangsInterrupted).as("hung handlers interrupted at the timeout").isPositive();
    soft.assertThat(a.longHandlersPastLease)
        .as("long handlers that succeeded after running longer than the lease")
        .isPositive();
    soft.assertThat(a.nulErrors).as("handler errors carrying U+0000").isPositive();
    soft.assertThat(p.poisonRows).as("poison rows inserted").isEqualTo(FaultRun.POISON_ROWS);
    soft.assertThat(p.orderedSaved.get())
        .as("ordered tickets saved")
        .isEqualTo(2 * FaultRun.ORDERED_AGGREGATES * FaultRun.ORDERED_ROUNDS);
    soft.assertThat(p.orderedSavesWaited.get())
        .as("ordered saves that waited for another open transaction of their aggregate")
        .isPositive();
    soft.assertThat(a.poisonDeadWithReason)
        .as("undecodable rows DEAD with a reason")
        .isEqualTo(FaultRun.POISON_ROWS);
  }

  /** The record of every delivery and claim; each bound is explained in DeliveryAudit. */
  private static void assertDeliveryRecord(SoftAssertions soft, DeliveryAudit.Result a) {
    soft.assertThat(a.deliveries).as("deliveries recorded").isPositive();
    soft.assertThat(a.reexecAfterOk).as("re-executions after an ok of a healthy replica").isZero();
    // outages are shorter than the lease minus the write-back margin: the write-back must land
    soft.assertThat(a.reexecAfterOkAroundOutage)
        .as("re-executions after an ok around a database outage shorter than the lease")
        .isZero();
    soft.assertThat(a.overlaps).as("deliveries overlapping a live one").isZero();
    soft.assertThat(a.attemptNotIncreasing).as("attempts not increasing per ticket").isZero();
    soft.assertThat(a.attemptOverMax).as("attempts over max_attempts").isZero();
    soft.assertThat(a.attemptBurnedByStop).as("attempts burned by a graceful stop").isZero();
    soft.assertThat(a.claimsOfLiveLease).as("claims of a live lease").isZero();
    soft.assertThat(a.claimsNotCountingAttempt).as("claims not counting their attempt").isZero();
    soft.assertThat(a.takeoverOfLiveOwner).as("takeovers from a live owner").isZero();
    soft.assertThat(a.orderedDeliveries).as("deliveries of the ordered type").isPositive();
    soft.assertThat(a.orderedOutOfOrder)
        .as("ordered deliveries out of the order their saves committed in")
        .isZero();
    soft.assertThat(a.orderedAggregateOverlaps)
        .as("two tickets of one aggregate in flight at once (live replicas)")
        .isZero();
  }
}
