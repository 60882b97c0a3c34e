package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.spring.internal.StartupCheckFailureAnalyzer;
import io.localmessage.testing.TestDatabase;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * What a new Boot user meets at startup: a missing schema stops the application with the ways to
 * create it; what schema.initialize created is logged; the library's Flyway run adopts tables made
 * before it; a dotted biz type without brackets is a failure analysis with the fix.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupChecksTest {

  @ParameterizedTest
  @EnumSource(TestDatabase.Kind.class)
  void aMissingSchemaStopsTheStartupNamingBothFixes(TestDatabase.Kind kind) {
    try (TestDatabase db = TestDatabase.create(kind)) {
      // an application without Flyway
      Contexts.runner(db)
          .withClassLoader(new FilteredClassLoader("org.flywaydb"))
          .withPropertyValues("localmessage.schema.initialize=false")
          .run(
              ctx -> {
                assertThat(ctx).hasFailed();
                FailureAnalysis analysis = analyze(ctx.getStartupFailure());
                // MySQL/MariaDB and H2 also lock ordered saves' aggregates in a table
                assertThat(analysis.getDescription())
                    .contains(
                        kind == TestDatabase.Kind.POSTGRESQL
                            ? "[local_message, local_message_control, local_message_audit]"
                            : "[local_message, local_message_control, local_message_audit,"
                                + " local_message_lock]")
                    .contains("do not exist");
                assertThat(analysis.getAction())
                    .contains("localmessage.schema.initialize=true")
                    .contains("classpath:db/localmessage/")
                    .contains("localmessage_schema_history")
                    .contains("flyway-database-postgresql");
              });
    }
  }

  /**
   * A MySQL/MariaDB or H2 schema migrated by hand up to step V3: the first ordered save would fail
   * on the missing lock table, so the start stops and names it.
   */
  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Kind.class,
      names = {"MARIADB", "H2"})
  void aSchemaWithoutTheLockTableOfOrderedSavesStopsTheStartNamingIt(TestDatabase.Kind kind) {
    try (TestDatabase db = TestDatabase.create(kind)) {
      Contexts.runner(db).run(ctx -> assertThat(ctx).hasNotFailed()); // the whole schema
      Sql.update(db.dataSource(1), "DROP TABLE local_message_lock");
      Contexts.runner(db)
          .withClassLoader(new FilteredClassLoader("org.flywaydb"))
          .withPropertyValues("localmessage.schema.initialize=false")
          .run(
              ctx -> {
                assertThat(ctx).hasFailed();
                assertThat(analyze(ctx.getStartupFailure()).getDescription())
                    .contains("[local_message_lock]")
                    .contains("do not exist");
              });
    }
  }

  @Test
  void theCheckCanBeTurnedOff() {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.H2)) {
      Contexts.runner(db)
          .withPropertyValues(
              "localmessage.schema.initialize=false", "localmessage.schema.verify=false")
          .run(ctx -> assertThat(ctx).hasNotFailed());
    }
  }

  @Test
  void initializeLogsWhatItCreated(CapturedOutput output) {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL)) {
      Contexts.runner(db).run(ctx -> assertThat(ctx).hasNotFailed());
      assertThat(output.getOut())
          .contains(
              "event=schema_initialized created=[local_message, local_message_control,"
                  + " local_message_audit, local_inbox] existing=[]");
      Contexts.runner(db).run(ctx -> assertThat(ctx).hasNotFailed());
      assertThat(output.getOut())
          .contains(
              "event=schema_initialized created=[] existing=[local_message, local_message_control,"
                  + " local_message_audit, local_inbox]");
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Kind.class,
      names = {"POSTGRESQL", "MARIADB"})
  void theLibrarysFlywayRunAdoptsTablesMadeBeforeIt(TestDatabase.Kind kind) {
    try (TestDatabase db = TestDatabase.create(kind)) {
      DataSource check = db.dataSource(1);
      // made by schema.initialize, with a ticket in them
      Contexts.runner(db)
          .run(
              ctx -> {
                LocalMessages lm = ctx.getBean(LocalMessages.class);
                lm.inTransaction(c -> lm.save(c, NewMessage.action("kept", "k1").build()));
              });
      Contexts.runner(db)
          .withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
          .withPropertyValues("localmessage.schema.initialize=false", "spring.flyway.enabled=false")
          .run(
              ctx -> {
                assertThat(ctx).hasNotFailed();
                assertThat(Sql.count(check, "SELECT COUNT(*) FROM local_message")).isEqualTo(1);
                assertThat(
                        Sql.count(
                            check,
                            "SELECT COUNT(*) FROM localmessage_schema_history WHERE version = '3'"
                                + " AND type = 'BASELINE'"))
                    .isEqualTo(1);
              });
      // and a later start finds it up to date
      Contexts.runner(db)
          .withPropertyValues("localmessage.schema.initialize=false")
          .run(ctx -> assertThat(ctx).hasNotFailed());
    }
  }

  @Test
  void aDottedBizTypeWithoutBracketsIsAFailureAnalysisWithTheFix() {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.H2)) {
      Contexts.runner(db)
          .withPropertyValues("localmessage.types.points.add.backoff.schedule=1m,5m")
          .run(
              ctx -> {
                FailureAnalysis analysis = analyze(ctx.getStartupFailure());
                assertThat(analysis.getDescription())
                    .contains("'localmessage.types.points.add.backoff.schedule'")
                    .contains("biz type 'points' with a setting 'add'");
                assertThat(analysis.getAction())
                    .contains("localmessage.types[points.add].backoff.schedule")
                    .contains("\"[points.add]\":\n        backoff:\n          schedule: ...");
              });
    }
  }

  @Test
  void aBadEngineSettingIsAFailureAnalysis() {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.H2)) {
      Contexts.runner(db)
          .withPropertyValues("localmessage.concurrency=0")
          .run(
              ctx ->
                  assertThat(analyze(ctx.getStartupFailure()).getDescription())
                      .isEqualTo(
                          "Invalid localmessage setting: concurrency must be between 1 and 20000,"
                              + " was 0"));
    }
  }

  /** The analysis Boot prints, found through spring.factories as Boot finds it. */
  private static FailureAnalysis analyze(Throwable failure) {
    List<String> names =
        SpringFactoriesLoader.loadFactoryNames(
            FailureAnalyzer.class, StartupChecksTest.class.getClassLoader());
    assertThat(names).contains(StartupCheckFailureAnalyzer.class.getName());
    assertThat(failure).hasRootCauseInstanceOf(Exception.class);
    FailureAnalysis analysis = new StartupCheckFailureAnalyzer().analyze(failure);
    assertThat(analysis).as("analysis of %s", failure).isNotNull();
    return analysis;
  }
}
