package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.inbox.Inbox;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Bad input and operator actions on PostgreSQL, sessions in a non-UTC zone. */
class PostgresOperatorTest extends AbstractOperatorConformanceTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }

  /**
   * PostgreSQL's purge locks its batch with {@code FOR UPDATE SKIP LOCKED}: a row another session
   * holds is left for the next batch or purge, and the purge never waits for it.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = MessageStatus.class,
      names = {"DEAD", "CANCELED"})
  void aPurgeLeavesARowAnotherTransactionHoldsForTheNextPurgeInsteadOfWaiting(MessageStatus status)
      throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    lm.register("t.a", FAILS_FOR_GOOD, EngineFixture.config().build());
    SaveResult held = fx.save(lm, NewMessage.action("t.a", "held").payload("p").build());
    SaveResult free = fx.save(lm, NewMessage.action("t.a", "free").payload("p").build());
    if (status == MessageStatus.DEAD) {
      EngineFixture.drain(lm);
    } else {
      assertThat(lm.admin().cancel(held.id(), "ops", "obsolete")).isTrue();
      assertThat(lm.admin().cancel(free.id(), "ops", "obsolete")).isTrue();
    }
    assertThat(fx.count("status = ?", status == MessageStatus.DEAD ? 2 : 3)).isEqualTo(2);
    assertThat(
            whileHeld(
                "SELECT id FROM " + fx.table + " WHERE id = ? FOR UPDATE",
                held.id(),
                () -> lm.admin().purge(status, Duration.ZERO)))
        .as("the free row, without waiting for the held one")
        .isEqualTo(1);
    assertThat(lm.admin().purge(status, Duration.ZERO)).as("the next purge").isEqualTo(1);
  }

  @Test
  void anInboxPurgeLeavesARowAnotherTransactionHoldsInsteadOfWaiting() throws Exception {
    fx.build(fx.builder()); // creates the tables, the inbox's too
    Inbox inbox = Inbox.create(ds, fx.table + "_inbox", null);
    for (String id : new String[] {"held", "free"}) {
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        inbox.tryRecord(c, "ledger", id);
        c.commit();
      }
    }
    assertThat(
            whileHeld(
                "SELECT message_id FROM " + fx.table + "_inbox WHERE message_id = ? FOR UPDATE",
                "held",
                () -> inbox.purge(Duration.ZERO)))
        .as("the free row, without waiting for the held one")
        .isEqualTo(1);
    assertThat(inbox.purge(Duration.ZERO)).as("the next purge").isEqualTo(1);
  }

  /**
   * What {@code purge} returns when it runs while another transaction holds the row {@code lockSql}
   * locks (by its one parameter, {@code key}); fails after 10 s of waiting.
   */
  private <T> T whileHeld(String lockSql, Object key, Callable<T> purge) throws Exception {
    ExecutorService purger = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-purger"));
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(lockSql)) {
        ps.setObject(1, key);
        ps.executeQuery().close();
      }
      try {
        return purger.submit(purge).get(10, TimeUnit.SECONDS);
      } finally {
        c.rollback();
      }
    } finally {
      purger.shutdownNow();
      assertThat(purger.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }
}
