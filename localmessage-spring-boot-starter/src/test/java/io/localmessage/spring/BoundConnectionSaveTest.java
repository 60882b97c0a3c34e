package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.TransactionRequiredException;
import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A save is accepted only on the connection bound to the active transaction of the engine's
 * DataSource. The application's pool hands out connections with autocommit off: there, a connection
 * fetched outside the transaction takes the INSERT without complaint and is rolled back when it
 * goes back to the pool, so a save that is not refused is a ticket silently lost.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BoundConnectionSaveTest {
  private final Map<TestDatabase.Kind, TestDatabase> dbs = new EnumMap<>(TestDatabase.Kind.class);
  private final Map<TestDatabase, DataSource> checks = new java.util.HashMap<>();

  @BeforeAll
  void createDatabases() {
    for (TestDatabase.Kind kind :
        new TestDatabase.Kind[] {TestDatabase.Kind.POSTGRESQL, TestDatabase.Kind.MARIADB}) {
      TestDatabase db = TestDatabase.create(kind);
      dbs.put(kind, db);
      checks.put(db, db.dataSource(1));
    }
  }

  @AfterAll
  void dropDatabases() {
    dbs.values().forEach(TestDatabase::close);
  }

  private ApplicationContextRunner runner(TestDatabase db) {
    return Contexts.runner(db)
        .withPropertyValues(
            "spring.datasource.hikari.auto-commit=false",
            "spring.datasource.hikari.pool-name=" + poolName(db));
  }

  private static String poolName(TestDatabase db) {
    return "app-pool-" + db.name();
  }

  /**
   * The reported loss: the transaction manager runs on another DataSource, the save took a fresh
   * connection of the engine's pool, returned an id, and nothing was ever committed.
   */
  @ParameterizedTest
  @EnumSource(names = {"POSTGRESQL", "MARIADB"})
  void aTransactionOfAnotherDataSourceIsRefusedInsteadOfLosingTheTicket(TestDatabase.Kind kind) {
    TestDatabase db = dbs.get(kind);
    runner(db)
        .run(
            ctx -> {
              TransactionTemplate elsewhere = otherTransactionManager(db);
              String key = "foreign-" + kind;
              AtomicReference<SaveResult> saved = new AtomicReference<>();

              Throwable refused =
                  catchThrowable(
                      () ->
                          elsewhere.executeWithoutResult(
                              s -> saved.set(messages(ctx).save(ticket(key)))));

              long tickets = tickets(db, key);
              assertThat(saved.get())
                  .as("save returned a ticket while %s tickets exist after the commit", tickets)
                  .isNull();
              assertThat(tickets).isZero();
              assertThat(refused)
                  .isInstanceOf(TransactionRequiredException.class)
                  .hasMessageContaining(poolName(db))
                  .hasMessageContaining("@Transactional")
                  .hasMessageContaining(
                      "point localmessage at the transaction manager's DataSource")
                  .hasMessageContaining("Nothing was written");
            });
  }

  /**
   * Code in the foreign transaction already used the engine's DataSource (a JdbcTemplate read):
   * Spring then holds that connection until the foreign transaction ends, but no transaction
   * manager ever commits it. Writing there is the same loss.
   */
  @ParameterizedTest
  @EnumSource(names = {"POSTGRESQL", "MARIADB"})
  void aConnectionFetchedOnDemandInAForeignTransactionIsRefused(TestDatabase.Kind kind) {
    TestDatabase db = dbs.get(kind);
    runner(db)
        .run(
            ctx -> {
              TransactionTemplate elsewhere = otherTransactionManager(db);
              JdbcTemplate jdbc = new JdbcTemplate(ctx.getBean(DataSource.class));
              String key = "on-demand-" + kind;
              AtomicReference<SaveResult> saved = new AtomicReference<>();

              Throwable refused =
                  catchThrowable(
                      () ->
                          elsewhere.executeWithoutResult(
                              s -> {
                                jdbc.queryForObject("SELECT 1", Integer.class);
                                saved.set(messages(ctx).save(ticket(key)));
                              }));

              long tickets = tickets(db, key);
              assertThat(saved.get())
                  .as("save returned a ticket while %s tickets exist after the commit", tickets)
                  .isNull();
              assertThat(tickets).isZero();
              assertThat(refused)
                  .isInstanceOf(TransactionRequiredException.class)
                  .hasMessageContaining(poolName(db));
            });
  }

  @ParameterizedTest
  @EnumSource(names = {"POSTGRESQL", "MARIADB"})
  void noTransactionAtAllIsRefused(TestDatabase.Kind kind) {
    TestDatabase db = dbs.get(kind);
    runner(db)
        .run(
            ctx -> {
              String key = "none-" + kind;
              assertThatThrownBy(() -> messages(ctx).save(ticket(key)))
                  .isInstanceOf(TransactionRequiredException.class)
                  .hasMessageContaining("needs an active Spring transaction");
              assertThat(tickets(db, key)).isZero();
            });
  }

  /** The same pool under its own transaction manager: the ticket commits with the transaction. */
  @ParameterizedTest
  @EnumSource(names = {"POSTGRESQL", "MARIADB"})
  void aTransactionOfTheSameDataSourceCommitsTheTicket(TestDatabase.Kind kind) {
    TestDatabase db = dbs.get(kind);
    runner(db)
        .run(
            ctx -> {
              TransactionTemplate tx = ctx.getBean(TransactionTemplate.class);
              String key = "same-" + kind;
              SaveResult saved = tx.execute(s -> messages(ctx).save(ticket(key)));

              assertThat(saved.duplicate()).isFalse();
              assertThat(tickets(db, key)).isEqualTo(1);
            });
  }

  /**
   * A facade built on a {@link TransactionAwareDataSourceProxy} of the DataSource: transaction
   * managers bind the connection under the proxy's target, which is where the save looks.
   */
  @ParameterizedTest
  @EnumSource(names = {"POSTGRESQL", "MARIADB"})
  void aTransactionAwareProxyOfTheSameDataSourceWorks(TestDatabase.Kind kind) {
    TestDatabase db = dbs.get(kind);
    runner(db)
        .run(
            ctx -> {
              TransactionalMessages viaProxy =
                  new TransactionalMessages(
                      messages(ctx).localMessages(),
                      new TransactionAwareDataSourceProxy(ctx.getBean(DataSource.class)));
              String key = "proxy-" + kind;
              ctx.getBean(TransactionTemplate.class)
                  .executeWithoutResult(s -> viaProxy.save(ticket(key)));

              assertThat(tickets(db, key)).isEqualTo(1);
            });
  }

  private static TransactionalMessages messages(AssertableApplicationContext ctx) {
    assertThat(ctx).hasNotFailed();
    return ctx.getBean(TransactionalMessages.class);
  }

  private static TransactionTemplate otherTransactionManager(TestDatabase db) {
    return new TransactionTemplate(new DataSourceTransactionManager(db.dataSource(2)));
  }

  /** A type without a handler, due in an hour: it stays in the table for the count. */
  private static NewMessage ticket(String key) {
    return NewMessage.action("bound.check", key).delay(Duration.ofHours(1)).build();
  }

  private long tickets(TestDatabase db, String key) {
    return Sql.count(
        checks.get(db),
        "SELECT COUNT(*) FROM local_message WHERE biz_type = 'bound.check' AND idem_key = ?",
        key);
  }
}
