package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.LocalMessages;
import io.localmessage.Message;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.PermanentFailure;
import io.localmessage.admin.AuditEntry;
import io.localmessage.spring.internal.LocalMessageEndpoint;
import io.localmessage.testing.TestDatabase;
import java.security.Principal;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.support.TransactionTemplate;

/** The health indicator's states and the actuator endpoint's operations, called as beans. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HealthAndEndpointTest {
  private TestDatabase db;

  @BeforeAll
  void createDatabase() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }

  @AfterAll
  void dropDatabase() {
    db.close();
  }

  private ApplicationContextRunner runner() {
    return Contexts.runner(db)
        .withUserConfiguration(Failing.class)
        .withPropertyValues("localmessage.poll-interval=100ms");
  }

  @Configuration(proxyBeanMethods = false)
  static class Failing {
    @LocalMessageHandler("hc.fail")
    void fail(Message m) throws PermanentFailure {
      throw new PermanentFailure("rejected by the remote side");
    }
  }

  @Test
  void healthIsUpThenOutOfServiceAboveTheDeadThreshold() {
    runner()
        .withPropertyValues("localmessage.table=hc_dead", "localmessage.health.max-dead=0")
        .run(
            ctx -> {
              HealthIndicator health =
                  ctx.getBean("localmessageHealthIndicator", HealthIndicator.class);
              assertThat(health.health().getStatus()).isEqualTo(Status.UP);

              long id = save(ctx, "hc.fail", "dead-1", Duration.ZERO);
              awaitStatus(ctx, id, MessageStatus.DEAD);

              Health h = health.health();
              assertThat(h.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
              assertThat(h.getDetails())
                  .containsEntry("dead", 1L)
                  .containsEntry("exceeded", List.of("1 dead tickets, above 0"));
              @SuppressWarnings("unchecked")
              Map<String, Object> types = (Map<String, Object>) h.getDetails().get("types");
              assertThat(types).containsKey("hc.fail");
            });
  }

  @Test
  void aCustomStatusForTheAgeThresholdAndDownWhenTheStoreIsUnreachable() {
    runner()
        .withPropertyValues(
            "localmessage.table=hc_age",
            "localmessage.health.max-oldest-pending-age=300ms",
            "localmessage.health.threshold-status=WARN")
        .run(
            ctx -> {
              HealthIndicator health =
                  ctx.getBean("localmessageHealthIndicator", HealthIndicator.class);
              // a ticket due in an hour stays PENDING and ages
              save(ctx, "hc.later", "later-1", Duration.ofHours(1));
              await()
                  .atMost(Duration.ofSeconds(5))
                  .until(() -> health.health().getStatus().equals(new Status("WARN")));
              assertThat(health.health().getDetails().get("exceeded").toString())
                  .contains("oldest pending ticket is");

              ctx.getBean(HikariDataSource.class).close();
              Health down = health.health();
              assertThat(down.getStatus()).isEqualTo(Status.DOWN);
              assertThat(down.getDetails().get("cause").toString()).contains("has been closed");
            });
  }

  /**
   * A stuck poller makes the indicator DOWN although the table is still readable. Another session
   * holds an EXCLUSIVE lock on the ticket table: plain reads (the backlog query) go through, the
   * poller's claim (an UPDATE) waits for the lock, so the poller makes no progress. Released, the
   * poller succeeds again and the indicator is UP.
   */
  @Test
  void downWhileThePollerIsStuckAndUpAgainOnceItRecovers() {
    runner()
        .withPropertyValues("localmessage.table=hc_stuck", "localmessage.loop-stuck-after=1s")
        .run(
            ctx -> {
              HealthIndicator health =
                  ctx.getBean("localmessageHealthIndicator", HealthIndicator.class);
              await()
                  .atMost(Duration.ofSeconds(10))
                  .until(() -> health.health().getStatus().equals(Status.UP));

              DataSource lockSource = db.dataSource(1);
              try (Connection lock = lockSource.getConnection()) {
                lock.setAutoCommit(false);
                try (Statement st = lock.createStatement()) {
                  st.execute("LOCK TABLE hc_stuck IN EXCLUSIVE MODE");
                }
                await()
                    .atMost(Duration.ofSeconds(10))
                    .untilAsserted(
                        () -> assertThat(health.health().getStatus()).isEqualTo(Status.DOWN));
                Health down = health.health();
                assertThat(down.getDetails())
                    .containsEntry("stuck", List.of("poller"))
                    .containsEntry("running", true)
                    .containsEntry("pending", 0L)
                    .doesNotContainKey("cause");
                assertThat(loop(down, "poller"))
                    .containsEntry("stuck", true)
                    .containsEntry("stuckAfter", "PT1S");
                assertThat(loop(down, "writer")).containsEntry("stuck", false);
                lock.rollback();
              }

              await()
                  .atMost(Duration.ofSeconds(10))
                  .until(() -> health.health().getStatus().equals(Status.UP));
              Health up = health.health();
              assertThat(up.getDetails())
                  .doesNotContainKey("stuck")
                  .containsEntry("running", true)
                  .containsKey("pending");
              assertThat(loops(up))
                  .containsKeys("poller", "writer", "watchdog", "renewer", "maintenance");
              assertThat(loop(up, "poller")).containsEntry("stuck", false);
              assertThat(loop(up, "poller").get("lastSuccess")).isNotEqualTo("never");
            });
  }

  /**
   * With {@code localmessage.auto-startup=false} the engine runs only when called ({@code
   * runOnce()}); its loops never run on their own, so their age says nothing about being stuck.
   */
  @Test
  void anEngineThatWasNeverStartedIsNotReportedStuck() {
    runner()
        .withPropertyValues(
            "localmessage.table=hc_manual",
            "localmessage.auto-startup=false",
            "localmessage.loop-stuck-after=100ms")
        .run(
            ctx -> {
              HealthIndicator health =
                  ctx.getBean("localmessageHealthIndicator", HealthIndicator.class);
              save(ctx, "hc.fail", "manual-1", Duration.ZERO);
              assertThat(ctx.getBean(LocalMessages.class).runOnce()).isEqualTo(1);
              // the poller's threshold is 3 poll intervals (300 ms): well past it, still UP
              await()
                  .during(Duration.ofSeconds(1))
                  .atMost(Duration.ofSeconds(3))
                  .untilAsserted(
                      () -> assertThat(health.health().getStatus()).isEqualTo(Status.UP));
              assertThat(health.health().getDetails()).containsEntry("running", false);
            });
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> loops(Health health) {
    Object loops = health.getDetails().get("loops");
    return loops == null ? Map.of() : (Map<String, Object>) loops;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> loop(Health health, String name) {
    Object loop = loops(health).get(name);
    return loop == null ? Map.of() : (Map<String, Object>) loop;
  }

  @Test
  void theEndpointIsNotCreatedUnlessExposed() {
    runner()
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(LocalMessageEndpoint.class);
            });
  }

  @Test
  void endpointOperations() {
    runner()
        .withPropertyValues("management.endpoints.web.exposure.include=localmessage")
        .run(this::operate);
  }

  private void operate(AssertableApplicationContext ctx) {
    LocalMessageEndpoint endpoint = ctx.getBean(LocalMessageEndpoint.class);
    LocalMessages lm = ctx.getBean(LocalMessages.class);
    long d1 = save(ctx, "hc.fail", "ep-d1", Duration.ZERO);
    long d2 = save(ctx, "hc.fail", "ep-d2", Duration.ZERO);
    awaitStatus(ctx, d1, MessageStatus.DEAD);
    awaitStatus(ctx, d2, MessageStatus.DEAD);

    LocalMessageEndpoint.Overview overview = endpoint.overview();
    assertThat(overview.replica()).isEqualTo(lm.replicaId());
    LocalMessageEndpoint.TypeRow row =
        overview.types().stream()
            .filter(t -> t.bizType().equals("hc.fail"))
            .findFirst()
            .orElseThrow();
    assertThat(row.dead()).isGreaterThanOrEqualTo(2);

    List<?> dead = (List<?>) endpoint.show("dead", "hc.fail", d1 - 1, 1).getBody();
    assertThat(dead)
        .extracting(r -> ((LocalMessageEndpoint.MessageSummary) r).id())
        .containsExactly(d1);
    assertThat(((LocalMessageEndpoint.MessageSummary) dead.get(0)).lastError())
        .contains("rejected by the remote side");
    assertThat((List<?>) endpoint.show("dead", "hc.fail", d1, 10).getBody())
        .extracting(r -> ((LocalMessageEndpoint.MessageSummary) r).id())
        .containsExactly(d2);
    WebEndpointResponse<Object> one = endpoint.show(Long.toString(d1), null, null, null);
    assertThat(one.getStatus()).isEqualTo(200);
    assertThat(((LocalMessageEndpoint.MessageDetail) one.getBody()).message().idemKey())
        .isEqualTo("ep-d1");
    assertThat(endpoint.show("99999999", null, null, null).getStatus()).isEqualTo(404);
    assertBad(endpoint.show("nothing", null, null, null), "neither 'dead'");
    assertBad(endpoint.show("dead", null, null, 501), "limit must be between 1 and 500");

    // the bean as auto-configured: read-only, whoever asks
    SecurityContext alice = security(() -> "alice", true);
    WebEndpointResponse<Object> off = endpoint.act("pause", "hc.fail", "maintenance", alice);
    assertThat(off.getStatus()).isEqualTo(403);
    assertThat(off.getBody().toString()).contains("localmessage.endpoint.write-enabled=true");
    assertThat(lm.admin().paused()).doesNotContain("hc.fail");

    // opted in: the operator authority, by role or by plain authority, and a principal's name
    LocalMessageEndpoint writable =
        new LocalMessageEndpoint(lm, new OperatorRule(OperatorRule.DEFAULT_AUTHORITY), true);
    WebEndpointResponse<Object> requeued =
        writable.act("requeue", Long.toString(d1), "remote fixed", alice);
    assertThat(requeued.getStatus()).isEqualTo(200);
    assertThat(requeued.getBody())
        .isEqualTo(new LocalMessageEndpoint.ActionResult("requeue", Long.toString(d1), 1, "alice"));
    assertThat(lm.admin().audit(d1))
        .extracting(AuditEntry::action, AuditEntry::operator, AuditEntry::reason)
        .contains(org.assertj.core.groups.Tuple.tuple("REQUEUE", "alice", "remote fixed"));

    assertThat(writable.cancel(Long.toString(d2), "no principal", SecurityContext.NONE).getStatus())
        .isEqualTo(403);
    assertThat(
            writable
                .cancel(Long.toString(d2), "no role", security(() -> "victor", false))
                .getStatus())
        .isEqualTo(403);
    assertThat(lm.admin().get(d2).orElseThrow().status()).isEqualTo(MessageStatus.DEAD);
    WebEndpointResponse<Object> canceled =
        writable.cancel(Long.toString(d2), "resolved by hand", alice);
    assertThat(((LocalMessageEndpoint.ActionResult) canceled.getBody()).changed()).isEqualTo(1);
    assertThat(lm.admin().get(d2).orElseThrow().status()).isEqualTo(MessageStatus.CANCELED);

    writable.act("pause", "hc.fail", "maintenance", alice);
    assertThat(lm.admin().paused()).contains("hc.fail");
    assertThat(endpoint.overview().paused()).contains("hc.fail");
    writable.act("resume", "hc.fail", "done", alice);
    assertThat(lm.admin().paused()).doesNotContain("hc.fail");

    assertBad(writable.act("requeue", "12", " ", alice), "reason is required");
    assertBad(writable.act("requeue", "12", null, alice), "reason is required");
    assertBad(writable.cancel("12", null, alice), "reason is required");
    assertBad(writable.act("explode", "12", "why not", alice), "unknown action 'explode'");
    assertBad(writable.cancel("abc", "typo", alice), "'abc' is not a message id");
    assertBad(writable.act("pause", "bad type!", "x", alice), "bizType");
    assertBad(writable.act("pause", "hc.fail", "a\nforged", alice), "control character U+000A");
    assertBad(writable.act("pause", "hc.fail", "r".repeat(600), alice), "reason");
    assertThat(lm.admin().paused()).doesNotContain("hc.fail");

    // a ticket whose lease is live cannot be cancelled: 409 with the reason, nothing changes
    long inFlight = save(ctx, "hc.nobody", "ep-in-flight", Duration.ofHours(1));
    io.localmessage.testing.Sql.update(
        ctx.getBean(DataSource.class),
        "UPDATE local_message SET lease_owner = 'other-replica' WHERE id = ?",
        inFlight);
    WebEndpointResponse<Object> busy =
        writable.cancel(Long.toString(inFlight), "not needed", alice);
    assertThat(busy.getStatus()).isEqualTo(409);
    assertThat(busy.getBody().toString()).contains("other-replica");
    assertThat(lm.admin().get(inFlight).orElseThrow().status()).isEqualTo(MessageStatus.PENDING);
  }

  /** A 400 whose body says what is wrong. */
  private static void assertBad(WebEndpointResponse<Object> r, String says) {
    assertThat(r.getStatus()).isEqualTo(400);
    assertThat(r.getBody().toString()).contains(says);
  }

  private static SecurityContext security(Principal principal, boolean admin) {
    return new SecurityContext() {
      @Override
      public Principal getPrincipal() {
        return principal;
      }

      @Override
      public boolean isUserInRole(String role) {
        return admin && role.equals("ROLE_" + OperatorRule.DEFAULT_AUTHORITY);
      }
    };
  }

  private static long save(
      AssertableApplicationContext ctx, String type, String key, Duration delay) {
    TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
    return ctx.getBean(TransactionTemplate.class)
        .execute(s -> messages.save(NewMessage.action(type, key).delay(delay).build()))
        .id();
  }

  private static void awaitStatus(AssertableApplicationContext ctx, long id, MessageStatus status) {
    LocalMessages lm = ctx.getBean(LocalMessages.class);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> lm.admin().get(id).map(t -> t.status() == status).orElse(false));
  }
}
