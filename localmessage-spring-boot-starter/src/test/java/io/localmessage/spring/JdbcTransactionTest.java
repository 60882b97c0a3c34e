package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.Message;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.TransactionRequiredException;
import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Saves under {@code DataSourceTransactionManager} (JdbcTemplate, jOOQ-style code): the ticket
 * shares the business row's fate, and the after-commit path follows the transaction that really
 * committed. The poll interval is 10 s: deliveries within 5 s came from the after-commit path.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcTransactionTest {
  private TestDatabase db;
  private DataSource check;

  @BeforeAll
  void createDatabase() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
    check = db.dataSource(3);
    Sql.update(check, "CREATE TABLE account (id VARCHAR(32) PRIMARY KEY, balance INT NOT NULL)");
  }

  @AfterAll
  void dropDatabase() {
    db.close();
  }

  @Test
  void transactionSemantics() {
    Contexts.runner(db).withUserConfiguration(Recorder.class).run(this::semantics);
  }

  private void semantics(AssertableApplicationContext ctx) {
    assertThat(ctx).hasNotFailed();
    assertThat(ctx.getBean(org.springframework.transaction.PlatformTransactionManager.class))
        .isInstanceOf(DataSourceTransactionManager.class);
    TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
    TransactionTemplate tx = ctx.getBean(TransactionTemplate.class);
    JdbcTemplate jdbc = new JdbcTemplate(ctx.getBean(DataSource.class));
    Recorder seen = ctx.getBean(Recorder.class);

    // commit: business row and ticket together, delivered right after the commit
    tx.executeWithoutResult(
        s -> {
          jdbc.update("INSERT INTO account (id, balance) VALUES (?, ?)", "a1", 10);
          messages.save(NewMessage.action("jdbc.notify", "a1").build());
        });
    await().atMost(Duration.ofSeconds(5)).until(() -> seen.keys.contains("a1"));

    // rollback: neither the row nor the ticket
    assertThatThrownBy(
            () ->
                tx.executeWithoutResult(
                    s -> {
                      jdbc.update("INSERT INTO account (id, balance) VALUES (?, ?)", "a2", 10);
                      messages.save(NewMessage.action("jdbc.notify", "a2").build());
                      throw new IllegalStateException("boom");
                    }))
        .hasMessage("boom");
    assertThat(Sql.count(check, "SELECT COUNT(*) FROM account WHERE id = 'a2'")).isZero();
    assertThat(tickets("a2")).isZero();

    // a duplicate is a no-op that leaves the transaction usable
    SaveResult dup =
        tx.execute(
            s -> {
              SaveResult first = messages.save(NewMessage.action("jdbc.notify", "a3").build());
              SaveResult again = messages.save(NewMessage.action("jdbc.notify", "a3").build());
              jdbc.update("INSERT INTO account (id, balance) VALUES (?, ?)", "a3", 1);
              assertThat(first.duplicate()).isFalse();
              return again;
            });
    assertThat(dup.duplicate()).isTrue();
    assertThat(Sql.count(check, "SELECT COUNT(*) FROM account WHERE id = 'a3'")).isEqualTo(1);
    await().atMost(Duration.ofSeconds(5)).until(() -> seen.keys.contains("a3"));

    // REQUIRES_NEW: the inner transaction's ticket goes right after the inner commit, while the
    // outer one is still open; the outer one's ticket dies with its rollback
    TransactionTemplate requiresNew = new TransactionTemplate(tx.getTransactionManager());
    requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    assertThatThrownBy(
            () ->
                tx.executeWithoutResult(
                    s -> {
                      messages.save(NewMessage.action("jdbc.notify", "outer").build());
                      requiresNew.executeWithoutResult(
                          inner ->
                              messages.save(NewMessage.action("jdbc.notify", "inner").build()));
                      await()
                          .atMost(Duration.ofSeconds(5))
                          .until(() -> seen.keys.contains("inner"));
                      throw new IllegalStateException("outer fails");
                    }))
        .hasMessage("outer fails");
    assertThat(tickets("outer")).isZero();

    // a later ticket is delivered; the rolled-back ones never were
    tx.executeWithoutResult(s -> messages.save(NewMessage.action("jdbc.notify", "last").build()));
    await().atMost(Duration.ofSeconds(5)).until(() -> seen.keys.contains("last"));
    assertThat(seen.keys).containsExactly("a1", "a3", "inner", "last");
  }

  @Test
  void savesThatCannotJoinTheTransactionAreRefused() {
    Contexts.runner(db)
        .withUserConfiguration(Recorder.class)
        .run(
            ctx -> {
              TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
              TransactionTemplate tx = ctx.getBean(TransactionTemplate.class);

              // a read-only transaction
              TransactionTemplate readOnly = new TransactionTemplate(tx.getTransactionManager());
              readOnly.setReadOnly(true);
              assertThatThrownBy(
                      () ->
                          readOnly.executeWithoutResult(
                              s -> messages.save(NewMessage.action("jdbc.notify", "ro").build())))
                  .isInstanceOf(TransactionRequiredException.class)
                  .hasMessageContaining("read-only");

              // a transaction on another DataSource (here: another pool): the ticket would be
              // written outside it
              DataSource other = db.dataSource(2);
              TransactionTemplate elsewhere =
                  new TransactionTemplate(new DataSourceTransactionManager(other));
              assertThatThrownBy(
                      () ->
                          elsewhere.executeWithoutResult(
                              s ->
                                  messages.save(NewMessage.action("jdbc.notify", "other").build())))
                  .isInstanceOf(TransactionRequiredException.class)
                  .hasMessageContaining("bound to the active transaction of localmessage's")
                  .hasMessageContaining(ctx.getBean(DataSource.class).toString());

              // no transaction at all
              assertThatThrownBy(
                      () -> messages.save(NewMessage.action("jdbc.notify", "none").build()))
                  .isInstanceOf(TransactionRequiredException.class);

              assertThat(tickets("ro") + tickets("other") + tickets("none")).isZero();
              assertThat(ctx.getBean(Recorder.class).keys).isEmpty();
            });
  }

  private long tickets(String idemKey) {
    return Sql.count(
        check,
        "SELECT COUNT(*) FROM local_message WHERE biz_type = 'jdbc.notify' AND idem_key = ?",
        idemKey);
  }

  @Configuration(proxyBeanMethods = false)
  static class Recorder {
    final List<String> keys = new CopyOnWriteArrayList<>();

    @LocalMessageHandler("jdbc.notify")
    void handle(Message m) {
      keys.add(m.idemKey());
    }
  }
}
