package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.spi.Dialects;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.Intercepting;
import io.localmessage.testing.Sql;
import io.localmessage.testing.StatementLog;
import io.localmessage.testing.TestDatabase;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The bulk requeue of a type's dead letters: it looks ids up a batch at a time, so a type with a
 * million dead letters is not read into memory at once, and it stops at what was dead when it
 * started, so a message that dies again meanwhile (the channel is still broken) is not sent round
 * again by the same click.
 */
class H2OperatorActionsBulkTest extends DatabaseTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  private OperatorActions actions(DataSource dataSource, int batchSize) {
    return new OperatorActions(
        dataSource, Dialects.named("h2"), Tables.of(fx.table, fx.table + "_inbox"), batchSize);
  }

  /** Inserts {@code n} messages of t.a with {@code status}, keys prefix + 1..n. */
  private void insert(String prefix, int n, int status) {
    Sql.update(
        ds,
        "INSERT INTO "
            + fx.table
            + " (kind, biz_type, idem_key, status, attempts, max_attempts, next_retry_at,"
            + " created_at, updated_at) SELECT 1, 't.a', CONCAT(?, X), ?, 3, 3,"
            + " CURRENT_TIMESTAMP(3), CURRENT_TIMESTAMP(3), CURRENT_TIMESTAMP(3)"
            + " FROM SYSTEM_RANGE(1, ?)",
        prefix,
        status,
        n);
  }

  @Test
  void aRequeueOfAllDeadLettersLooksThemUpOneBatchAtATime() {
    fx.build(fx.builder());
    insert("dead-", 7, 2);
    StatementLog log = new StatementLog(ds);
    assertThat(actions(log.dataSource(), 3).requeueAllDead("t.a", "ops", "channel fixed"))
        .isEqualTo(7);
    assertThat(fx.count("status = 0")).isEqualTo(7);
    assertThat(
            log.count("", sql -> sql.startsWith("SELECT id FROM") && sql.endsWith("ORDER BY id")))
        .as("rounds of at most 3 ids for 7 dead letters")
        .isEqualTo(3);
  }

  @Test
  void aRequeueOfAllDeadLettersLeavesAloneWhatDiesWhileItRuns() {
    fx.build(fx.builder());
    insert("dead-", 4, 2);
    insert("late-", 1, 0);
    AtomicBoolean died = new AtomicBoolean();
    // the late message dies (a worker's last attempt fails) while the first round is written
    DataSource dying =
        Intercepting.dataSource(
            ds,
            (real, m, a) -> {
              if (m.getName().equals("prepareStatement")
                  && ((String) a[0]).contains("requeued_at")
                  && died.compareAndSet(false, true)) {
                Sql.update(
                    ds,
                    "UPDATE "
                        + fx.table
                        + " SET status = 2, updated_at = CURRENT_TIMESTAMP(3)"
                        + " WHERE idem_key = 'late-1'");
              }
              return Intercepting.PROCEED;
            });
    assertThat(actions(dying, 2).requeueAllDead("t.a", "ops", "channel fixed")).isEqualTo(4);
    assertThat(died).isTrue();
    assertThat(fx.count("idem_key = 'late-1' AND status = 2")).isEqualTo(1);
    assertThat(fx.count("status = 0")).isEqualTo(4);
  }
}
