package io.localmessage.faults.mutants;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * A representative subset of the generated SQL mutants, run by the test command on every build (the
 * whole run, {@link SqlMutantsTest}, is behind a flag): mutants of each kind on PostgreSQL's claim
 * and write-back, each with the conformance test that kills it (among them the survivors of the
 * first full table that new tests now kill). Each case shows the test passes unmutated, then that
 * the generator still finds the mutation in the statement the engine runs (a statement rewritten so
 * that it no longer has it fails here, naming the mutation) and that the test fails with it. About
 * 30 s.
 */
class SqlMutantsSubsetTest {
  private static final String ENGINE = "io.localmessage.PostgresEngineTest";
  private static final String BOUNDS = "io.localmessage.PostgresEngineBoundsTest";
  private static final String HARDENING = "io.localmessage.PostgresHardeningTest";
  private static final String OPERATOR = "io.localmessage.PostgresOperatorTest";

  private static Launcher launcher;

  @BeforeAll
  static void install() {
    launcher = LauncherFactory.create();
    SqlMutantsTest.install();
  }

  @AfterAll
  static void uninstall() {
    SqlMutantsTest.uninstall();
  }

  static Stream<Arguments> mutants() {
    return Stream.of(
        Arguments.of("claim", "drop `m.status = 0`", ENGINE, "purgeDeletesInBoundedBatches()"),
        Arguments.of(
            "claim",
            "drop `m.next_retry_at <= statement_timestamp()`",
            ENGINE,
            "retryableFailuresBackOffThenGoDeadWhenAttemptsRunOut()"),
        Arguments.of(
            "claim",
            "drop assignment `attempts = t.attempts + 1`",
            ENGINE,
            "invariant6_crashLoopingTicketGoesDeadThroughAttemptsCountedAtClaim()"),
        Arguments.of(
            "claim",
            "drop `FOR UPDATE SKIP LOCKED`",
            BOUNDS,
            "aRowLockedByAnotherTransactionDoesNotHoldUpTheOthers()"),
        Arguments.of(
            "claim",
            "drop `m.biz_type = ?`",
            BOUNDS,
            "test-template:aReplicaNeverClaimsATypeItDoesNotHandle(boolean)"),
        Arguments.of(
            "claim, ordered",
            "drop `m.biz_type = ?`",
            BOUNDS,
            "test-template:aReplicaNeverClaimsATypeItDoesNotHandle(boolean)"),
        Arguments.of(
            "claim",
            "`<` -> `<=` in `m.attempts < m.max_attempts`",
            BOUNDS,
            "test-template:aLastAttemptWhoseLeaseRanOutIsNeverRunAgainBeforeTheSweepReachesIt"
                + "(boolean)"),
        Arguments.of(
            "claim, ordered",
            "`<` -> `<=` in `m.attempts < m.max_attempts`",
            BOUNDS,
            "test-template:aLastAttemptWhoseLeaseRanOutIsNeverRunAgainBeforeTheSweepReachesIt"
                + "(boolean)"),
        Arguments.of(
            "claim, ordered",
            "drop `o.biz_type = m.biz_type`",
            BOUNDS,
            "anAggregateIdNamesAnAggregateOfItsOwnTypeOnly()"),
        Arguments.of(
            "claim",
            "drop `SKIP LOCKED`",
            BOUNDS,
            "aRowLockedByAnotherTransactionDoesNotHoldUpTheOthers()"),
        Arguments.of(
            "claim",
            "drop assignment `version = t.version + 1`",
            HARDENING,
            "anOutcomeArrivingAfterATakeoverIsFencedWhileTheNewOwnerStillRunsIt()"),
        Arguments.of(
            "claim",
            "`LIMIT N` -> `LIMIT (N) + N`",
            BOUNDS,
            "aClaimTakesNoMoreThanTheFreeSlotsAndTheLongestDueFirst()"),
        Arguments.of(
            "claim",
            "drop assignment `updated_at = statement_timestamp()`",
            BOUNDS,
            "anAttemptsOutcomeIsDatedWhenItIsWrittenNotWhenTheMessageWasClaimed()"),
        Arguments.of(
            "write-back update",
            "drop assignment `updated_at = statement_timestamp()`",
            BOUNDS,
            "anAttemptsOutcomeIsDatedWhenItIsWrittenNotWhenTheMessageWasClaimed()"),
        Arguments.of(
            "DELETE FROM T WHERE (id) IN",
            "drop `s.biz_type = h.biz_type`",
            OPERATOR,
            "aDeadPurgeKeepsOnlyHeadsThatALaterMessageOfTheirOwnTypeStillWaitsBehind()"),
        Arguments.of(
            "DELETE FROM T WHERE (id) IN",
            "drop `updated_at < (statement_timestamp() + ? * interval '1 millisecond')`",
            OPERATOR,
            "aDeadPurgeCountsAgeFromWhenTheMessageDiedNotFromItsLastLeaseEnd()"),
        Arguments.of(
            "write-back update",
            "drop `t.id = c.id`",
            "io.localmessage.PostgresOutcomeRulesTest",
            "aNotYetInsideMaxAgeWaitsAndOnePastItGoesDead()"),
        Arguments.of(
            "write-back update",
            "drop `t.version = c.v`",
            BOUNDS,
            "staleWriteBacksAreCountedOnePerMessageAndCurrentOnesNotAtAll()"),
        Arguments.of(
            "write-back update",
            "drop assignment `version = t.version + 1`",
            BOUNDS,
            "aWriteBackWhoseCommitAcknowledgementWasLostIsNotAppliedTwice()"),
        Arguments.of(
            "write-back delete",
            "drop `t.version = c.v`",
            BOUNDS,
            "staleWriteBacksAreCountedOnePerMessageAndCurrentOnesNotAtAll()"));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("mutants")
  void theConformanceTestKillsTheMutant(
      String statement, String mutation, String suite, String method) {
    // a method, or a segment of another kind (a parameterized test is a test-template)
    String unit =
        "[engine:junit-jupiter]/[class:"
            + suite
            + "]/["
            + (method.contains(":") ? method : "method:" + method)
            + "]";
    // the statement by name: the one-type claim is "claim ~<hash>", not "claim, types ~<hash>"
    Predicate<String> shapes = shape -> Statements.name(shape).startsWith(statement + " ~");
    assertThat(SqlMutantsTest.runUnder(launcher, null, unit))
        .as(method + " unmutated (cause: " + SqlMutantsTest.lastFailure() + ")")
        .isNull();
    String failed =
        SqlMutantsTest.runUnder(launcher, new SqlMutantsTest.Mutant(shapes, -1, mutation), unit);
    assertThat(SqlMutantsTest.appliedCount())
        .as("times the %s of %s was applied while %s ran", mutation, statement, method)
        .isPositive();
    assertThat(failed).as("%s with the %s of %s", method, mutation, statement).isNotNull();
  }
}
