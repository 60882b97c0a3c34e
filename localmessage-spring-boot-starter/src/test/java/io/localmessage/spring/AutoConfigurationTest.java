package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.Message;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.admin.MessageView;
import io.localmessage.internal.engine.Settings;
import io.localmessage.spring.internal.EngineLifecycle;
import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.util.ReflectionTestUtils;
import org.springframework.transaction.support.TransactionTemplate;

/** What the properties switch on and off, and that every setting reaches the engine. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AutoConfigurationTest {
  private TestDatabase db;
  private DataSource check;

  @BeforeAll
  void createDatabase() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
    check = db.dataSource(2);
  }

  @AfterAll
  void dropDatabase() {
    db.close();
  }

  @Test
  void propertyDefaultsAreTheCoreDefaults() {
    LocalMessageProperties p = new LocalMessageProperties();
    assertThat(p.isEnabled()).isTrue();
    assertThat(p.isAutoStartup()).isTrue();
    assertThat(p.getTable()).isEqualTo(LocalMessagesBuilder.DEFAULT_TABLE);
    assertThat(p.getInboxTable()).isEqualTo(LocalMessagesBuilder.DEFAULT_INBOX_TABLE);
    assertThat(p.getConcurrency()).isEqualTo(LocalMessagesBuilder.DEFAULT_CONCURRENCY);
    assertThat(p.getLease()).isEqualTo(LocalMessagesBuilder.DEFAULT_LEASE);
    assertThat(p.getMaxExecutionTime()).isEqualTo(LocalMessagesBuilder.DEFAULT_MAX_EXECUTION_TIME);
    assertThat(p.getLoopStuckAfter()).isEqualTo(LocalMessagesBuilder.DEFAULT_LOOP_STUCK_AFTER);
    assertThat(p.getPollInterval()).isEqualTo(LocalMessagesBuilder.DEFAULT_POLL_INTERVAL);
    assertThat(p.getWriteBackMargin()).isEqualTo(LocalMessagesBuilder.DEFAULT_WRITE_BACK_MARGIN);
    assertThat(p.getShutdownTimeout()).isEqualTo(LocalMessagesBuilder.DEFAULT_SHUTDOWN_TIMEOUT);
    assertThat(p.getMaintenanceInterval())
        .isEqualTo(LocalMessagesBuilder.DEFAULT_MAINTENANCE_INTERVAL);
    assertThat(p.getMaxPayloadBytes()).isEqualTo(LocalMessagesBuilder.DEFAULT_MAX_PAYLOAD_BYTES);
    assertThat(p.getPurgeBatchSize()).isEqualTo(LocalMessagesBuilder.DEFAULT_PURGE_BATCH_SIZE);
    assertThat(p.getWriteBatchSize()).isEqualTo(LocalMessagesBuilder.DEFAULT_WRITE_BATCH_SIZE);
    assertThat(p.getDefaultMaxAttempts()).as("unset: the handling replica's cap applies").isNull();
    assertThat(p.isWakeUps()).isTrue();
    assertThat(p.getSchema().isInitialize()).isFalse();
  }

  @Test
  void enabledFalseTurnsEverythingOff() {
    Contexts.runner(db)
        .withPropertyValues("localmessage.enabled=false")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(LocalMessages.class);
              assertThat(ctx).doesNotHaveBean(TransactionalMessages.class);
              assertThat(ctx).doesNotHaveBean(EngineLifecycle.class);
              assertThat(ctx).doesNotHaveBean(HealthIndicator.class);
            });
  }

  @Test
  void backsOffWithoutADataSource() {
    new ApplicationContextRunner()
        .withConfiguration(Contexts.STARTER)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(LocalMessages.class);
              assertThat(ctx).doesNotHaveBean(TransactionalMessages.class);
            });
  }

  @Test
  void everyEngineSettingReachesTheEngine() {
    Contexts.runner(db)
        .withPropertyValues(
            "localmessage.table=shop_ticket",
            "localmessage.inbox-table=shop_inbox",
            "localmessage.replica-id=replica-a",
            "localmessage.concurrency=3",
            "localmessage.lease=2m",
            "localmessage.poll-interval=250ms",
            "localmessage.write-back-margin=2s",
            "localmessage.shutdown-timeout=3s",
            "localmessage.maintenance-interval=7s",
            "localmessage.max-payload-bytes=16",
            "localmessage.purge-batch-size=10",
            "localmessage.write-batch-size=20",
            "localmessage.default-max-attempts=4",
            "localmessage.unordered-types=shop.order.paid,shop.order.shipped")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              LocalMessages lm = ctx.getBean(LocalMessages.class);
              Settings s = (Settings) ReflectionTestUtils.getField(lm, "settings");
              assertThat(s.table()).isEqualTo("shop_ticket");
              assertThat(s.inboxTable()).isEqualTo("shop_inbox");
              assertThat(s.replicaId()).isEqualTo("replica-a");
              assertThat(s.concurrency()).isEqualTo(3);
              assertThat(s.lease()).isEqualTo(Duration.ofMinutes(2));
              assertThat(s.pollInterval()).isEqualTo(Duration.ofMillis(250));
              assertThat(s.writeBackMargin()).isEqualTo(Duration.ofSeconds(2));
              assertThat(s.shutdownTimeout()).isEqualTo(Duration.ofSeconds(3));
              assertThat(s.maintenanceInterval()).isEqualTo(Duration.ofSeconds(7));
              assertThat(s.maxPayloadBytes()).isEqualTo(16);
              assertThat(s.purgeBatchSize()).isEqualTo(10);
              assertThat(s.writeBatchSize()).isEqualTo(20);
              assertThat(s.defaultMaxAttempts()).isEqualTo(4);
              assertThat(s.unorderedTypes())
                  .containsExactlyInAnyOrder("shop.order.paid", "shop.order.shipped");
              assertThat(s.autoCreateSchema()).isTrue();
              assertThat(s.meterRegistry()).isNull(); // no registry in this context

              // and they act: the tables were created under their names, the limits apply
              assertThat(Sql.count(check, "SELECT COUNT(*) FROM shop_ticket")).isZero();
              assertThat(Sql.count(check, "SELECT COUNT(*) FROM shop_inbox")).isZero();
              TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
              TransactionTemplate tx = ctx.getBean(TransactionTemplate.class);
              assertThatThrownBy(
                      () ->
                          tx.executeWithoutResult(
                              st ->
                                  messages.save(
                                      NewMessage.action("nobody.handles", "big")
                                          .payload(new byte[17])
                                          .build())))
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessageContaining("larger than maxPayloadBytes 16");
              SaveResult r =
                  tx.execute(
                      st -> messages.save(NewMessage.action("nobody.handles", "small").build()));
              assertThat(
                      Sql.count(check, "SELECT max_attempts FROM shop_ticket WHERE id = ?", r.id()))
                  .isEqualTo(4);
            });
  }

  @Test
  void perTypeOverridesTakeEffect() {
    Contexts.runner(db)
        .withUserConfiguration(OverrideHandlers.class)
        .withPropertyValues(
            "localmessage.poll-interval=100ms",
            "localmessage.types[ov.keep].retain-succeeded=1h",
            "localmessage.types[ov.fail].max-attempts=3",
            "localmessage.types[ov.fail].backoff.schedule=7m,1h")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
              TransactionTemplate tx = ctx.getBean(TransactionTemplate.class);
              long keep =
                  tx.execute(st -> messages.save(NewMessage.action("ov.keep", "k1").build())).id();
              long fail =
                  tx.execute(st -> messages.save(NewMessage.action("ov.fail", "f1").build())).id();
              LocalMessages lm = ctx.getBean(LocalMessages.class);

              // retain-succeeded: the ticket stays, SUCCEEDED, instead of being deleted
              await()
                  .atMost(Duration.ofSeconds(10))
                  .until(
                      () ->
                          lm.admin()
                              .get(keep)
                              .map(t -> t.status() == MessageStatus.SUCCEEDED)
                              .orElse(false));
              // max-attempts and the schedule's first delay
              await()
                  .atMost(Duration.ofSeconds(10))
                  .until(
                      () ->
                          lm.admin()
                              .get(fail)
                              .map(t -> t.attempts() == 1 && t.lastError() != null)
                              .orElse(false));
              MessageView f = lm.admin().get(fail).orElseThrow();
              assertThat(f.maxAttempts()).isEqualTo(3);
              assertThat(f.status()).isEqualTo(MessageStatus.PENDING);
              Duration wait = Duration.between(f.updatedAt(), f.nextRetryAt());
              assertThat(wait)
                  .isBetween(
                      Duration.ofMinutes(7).minusSeconds(5), Duration.ofMinutes(7).plusSeconds(5));
              assertThat(ctx.getBean(OverrideHandlers.class).failures).hasSize(1);
            });
  }

  @Test
  void aDottedBizTypeWithoutBracketsFailsWithTheFix() {
    Contexts.runner(db)
        .withUserConfiguration(OverrideHandlers.class)
        .withPropertyValues("localmessage.types.ov.fail.max-attempts=5")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("read as biz type 'ov' with a setting 'fail'")
                    .hasMessageContaining("localmessage.types[ov.fail].max-attempts"));
  }

  @Test
  void aHandlerTimeoutLongerThanTheMaxExecutionTimeFailsAtStartup() {
    Contexts.runner(db)
        .withUserConfiguration(OverrideHandlers.class)
        .withPropertyValues(
            "localmessage.max-execution-time=1m", "localmessage.types[ov.keep].timeout=2m")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining(
                        "maxExecutionTime PT1M is shorter than the handler timeout PT2M")
                    .hasMessageContaining("'ov.keep'"));
  }

  @Test
  void aBadEngineSettingFailsAtStartupWithTheCoreMessage() {
    Contexts.runner(db)
        .withPropertyValues("localmessage.concurrency=0")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessage("concurrency must be between 1 and 20000, was 0"));
  }

  @Test
  void autoStartupOffRegistersButDoesNotRun() {
    Contexts.runner(db)
        .withUserConfiguration(OverrideHandlers.class)
        .withPropertyValues("localmessage.auto-startup=false")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx.getBean(EngineLifecycle.class).isRunning()).isFalse();
              TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
              ctx.getBean(TransactionTemplate.class)
                  .executeWithoutResult(
                      st -> messages.save(NewMessage.action("ov.keep", "manual").build()));
              assertThat(ctx.getBean(OverrideHandlers.class).kept).isEmpty();
              assertThat(ctx.getBean(LocalMessages.class).runOnce()).isEqualTo(1);
              assertThat(ctx.getBean(OverrideHandlers.class).kept).containsExactly("manual");
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class OverrideHandlers {
    final List<String> kept = new CopyOnWriteArrayList<>();
    final List<String> failures = new CopyOnWriteArrayList<>();

    @LocalMessageHandler("ov.keep")
    void keep(Message m) {
      kept.add(m.idemKey());
    }

    @LocalMessageHandler("ov.fail")
    void fail(Message m) {
      failures.add(m.idemKey());
      throw new IllegalStateException("remote said no");
    }
  }
}
