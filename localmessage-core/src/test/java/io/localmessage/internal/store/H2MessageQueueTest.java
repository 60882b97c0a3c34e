package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.StoreException;
import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.Dialects;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Intercepting;
import io.localmessage.testing.Refusing;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The engine's queue on H2 (the locking-select dialect): claims that are all or nothing, batched
 * deletes that keep each row's version check, the sweep that says when it stopped at its batch
 * limit, and connections used in autocommit whatever the pool hands out.
 */
class H2MessageQueueTest extends DatabaseTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  private MessageQueue queue(DataSource dataSource) {
    return new MessageQueue(
        dataSource, Dialects.named("h2"), Tables.of(fx.table, fx.table + "_inbox"));
  }

  @Test
  void aBatchedDeleteRemovesEveryMessageWhoseVersionStillMatchesAndNoOther() {
    LocalMessages lm = fx.build(fx.builder());
    SaveResult a = fx.save(lm, NewMessage.action("t.a", "a").build());
    SaveResult b = fx.save(lm, NewMessage.action("t.a", "b").build());
    SaveResult c = fx.save(lm, NewMessage.action("t.a", "c").build());
    // another replica took b over meanwhile
    Sql.update(ds, "UPDATE " + fx.table + " SET version = version + 1 WHERE id = ?", b.id());
    int deleted =
        queue(ds).deleteIfCurrent(new long[] {a.id(), b.id(), c.id()}, new long[] {0, 0, 0});
    assertThat(deleted).isEqualTo(2);
    assertThat(fx.count("id = ?", b.id())).isEqualTo(1);
    assertThat(fx.countAll()).isEqualTo(1);
  }

  @Test
  void aClaimThatFailsPartWayClaimsNothing() {
    LocalMessages lm = fx.build(fx.builder());
    SaveResult a = fx.save(lm, NewMessage.action("t.a", "a").build());
    fx.save(lm, NewMessage.action("t.b", "b").build());
    // the second type's select fails after the first type's messages were marked claimed
    DataSource failing = Refusing.dataSource(ds, "t.b"::equals);
    ClaimRequest request =
        new ClaimRequest(
            List.of(
                new ClaimRequest.TypeLimit("t.a", 10, false, 3),
                new ClaimRequest.TypeLimit("t.b", 10, false, 3)),
            5_000,
            "replica-1",
            null);
    assertThatThrownBy(() -> queue(failing).claim(request)).isInstanceOf(StoreException.class);
    assertThat(fx.count("id = ? AND attempts = 0 AND lease_owner IS NULL", a.id()))
        .as("a is not held by a lease nobody works on")
        .isEqualTo(1);
    assertThat(queue(ds).claim(request)).hasSize(2);
  }

  @Test
  void aClaimHandsItsConnectionBackInAutocommit() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    fx.save(lm, NewMessage.action("t.a", "a").build());
    try (Connection shared = ds.getConnection()) {
      ClaimRequest request =
          new ClaimRequest(
              List.of(new ClaimRequest.TypeLimit("t.a", 10, false, 3)), 5_000, "r", null);
      assertThat(queue(Intercepting.single(shared)).claim(request)).hasSize(1);
      assertThat(shared.getAutoCommit()).isTrue();
    }
  }

  @Test
  void aSweepOfMoreExhaustedMessagesThanItsBatchSaysSoAndTheNextSweepTakesTheRest() {
    fx.build(fx.builder());
    int n = MessageQueue.EXPIRE_BATCH + 1;
    // last attempts claimed by a worker that died: lease ended a minute ago, attempts used up
    Sql.update(
        ds,
        "INSERT INTO "
            + fx.table
            + " (kind, biz_type, idem_key, attempts, max_attempts, lease_owner, next_retry_at,"
            + " created_at, updated_at) SELECT 1, 't.a', CONCAT('k', X), 3, 3, 'gone',"
            + " DATEADD(MINUTE, -1, CURRENT_TIMESTAMP(3)), CURRENT_TIMESTAMP(3),"
            + " CURRENT_TIMESTAMP(3) FROM SYSTEM_RANGE(1, ?)",
        n);
    MessageQueue queue = queue(ds);
    MessageQueue.Sweep first = queue.expireExhausted(List.of("t.a"), "expired", null);
    assertThat(first.expired()).isEqualTo(MessageQueue.EXPIRE_BATCH);
    assertThat(first.limited()).as("more may be left").isTrue();
    MessageQueue.Sweep second = queue.expireExhausted(List.of("t.a"), "expired", null);
    assertThat(second.expired()).isEqualTo(1);
    assertThat(second.limited()).isFalse();
    assertThat(fx.count("status = 2")).isEqualTo(n);
  }

  @Test
  void anEngineWithNoHandlerRegisteredYetRunsARoundThatDoesNothing() {
    // a replica that only saves (its handlers live elsewhere) still runs its maintenance
    LocalMessages lm = fx.build(fx.builder());
    fx.save(lm, NewMessage.action("t.a", "a").build());
    assertThat(lm.runOnce()).isZero();
    assertThat(fx.count("status = 0 AND attempts = 0")).isEqualTo(1);
  }

  @Test
  void onAPoolThatHandsOutConnectionsWithoutAutocommitOutcomesAreWrittenForGood() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    config.setUsername(db.user());
    config.setPassword(db.password());
    config.setMaximumPoolSize(4);
    config.setAutoCommit(false);
    try (HikariDataSource manual = new HikariDataSource(config)) {
      LocalMessages lm = fx.build(fx.builder(manual));
      lm.register("t.a", m -> {}, EngineFixture.config().build());
      fx.save(lm, NewMessage.action("t.a", "a").build());
      assertThat(lm.runOnce()).isEqualTo(1);
      lm.close();
    }
    // Hikari rolls back what a borrower left uncommitted: a delete outside autocommit is undone
    assertThat(fx.countAll()).isZero();
  }

  @Test
  void aConnectionThatCannotBeSetUpIsGivenBackToThePool() {
    fx.build(fx.builder());
    AtomicInteger closed = new AtomicInteger();
    DataSource broken =
        Intercepting.dataSource(
            ds,
            (real, m, a) -> {
              switch (m.getName()) {
                case "getAutoCommit" -> throw new SQLException("connection reset", "08006");
                case "close" -> closed.incrementAndGet();
                default -> {}
              }
              return Intercepting.PROCEED;
            });
    MessageQueries queries =
        new MessageQueries(broken, Dialects.named("h2"), Tables.of(fx.table, fx.table + "_in"));
    assertThatThrownBy(queries::pausedTypes).isInstanceOf(StoreException.class);
    assertThat(closed).hasValue(1);
  }
}
