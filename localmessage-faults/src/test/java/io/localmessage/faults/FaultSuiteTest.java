package io.localmessage.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The project's central promise under crashes and restarts: nothing lost, nothing applied twice.
 * The short configuration runs in CI; {@code -Dlm.faults.long=true} runs the long one (200,000
 * tickets, PostgreSQL and MariaDB as the ticket store).
 */
class FaultSuiteTest {
  private static final boolean LONG = Boolean.getBoolean("lm.faults.long");

  /** Set on a shared development machine where restarting the database would hurt others. */
  private static final boolean RESTART = !Boolean.getBoolean("lm.faults.noRestart");

  @Test
  void nothingLostNothingAppliedTwiceOnPostgres() throws Exception {
    run(
        TestDatabase.Kind.POSTGRESQL,
        TestDatabase.Kind.MARIADB,
        new FaultRun.Plan(
            LONG ? 200_000 : 20_000,
            3,
            Duration.ofSeconds(LONG ? 5 : 3),
            true,
            RESTART,
            Duration.ofMinutes(LONG ? 40 : 5),
            true));
  }

  @Test
  void nothingLostNothingAppliedTwiceOnMariaDb() throws Exception {
    if (!LONG) {
      return; // the short CI run covers PostgreSQL; the long run adds MariaDB as ticket store
    }
    run(
        TestDatabase.Kind.MARIADB,
        TestDatabase.Kind.POSTGRESQL,
        new FaultRun.Plan(
            200_000, 3, Duration.ofSeconds(5), true, RESTART, Duration.ofMinutes(40), true));
  }

  @Test
  void withoutTheInboxTheSuiteSeesDoubleEffects() throws Exception {
    FaultRun.Report r;
    try (TestDatabase tickets = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
        TestDatabase effects = TestDatabase.create(TestDatabase.Kind.MARIADB)) {
      r =
          new FaultRun(
                  new FaultRun.Plan(
                      3_000, 3, Duration.ofSeconds(2), false, false, Duration.ofMinutes(3), false),
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
    assertThat(r.saved()).isEqualTo(plan.tickets());
    assertThat(r.pendingLeft()).as("every ticket reached a terminal state").isZero();
    assertThat(r.deadNotByDesign()).as("DEAD only where the suite made it permanent").isZero();
    assertThat(r.dead()).isEqualTo(r.expectedDead());
    assertThat(r.lost()).as("lost effects").isZero();
    assertThat(r.doubleApplied()).as("double-applied effects").isZero();
    assertThat(r.distinctEffects()).isEqualTo(r.expectedEffects());
    assertThat(r.kills()).isPositive();
    assertThat(r.events()).as("events saved").isPositive();
    assertThat(r.eventsLost()).as("lost events").isZero();
    assertThat(r.eventsDoubleApplied()).as("double-applied events").isZero();
    assertThat(r.brokerKills()).as("the broker was killed and restarted").isEqualTo(1);
    assertThat(r.consumerKills()).as("the consumer was killed and restarted").isEqualTo(1);
    if (plan.restartDatabase()) {
      assertThat(r.restartDowntimeMs()).as("the database was restarted").isNotZero();
    }
  }
}
