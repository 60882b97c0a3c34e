package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.internal.metrics.MicrometerMetrics;
import io.localmessage.spi.EngineListener;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MicrometerMetricsTest {
  private TestDatabase db;

  @BeforeAll
  void start() {
    db = TestDatabase.create(TestDatabase.Kind.H2);
  }

  @AfterAll
  void stop() {
    db.close();
  }

  /**
   * Each engine event adds its own amount to its own counter, under the name the docs and the
   * shipped alert rules use: a counter that counts events instead of messages, or the wrong meter,
   * is caught here with distinct amounts per event.
   */
  @Test
  void everyCountingEventAddsItsOwnAmountToItsOwnCounter() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (EngineFixture fx = new EngineFixture(db.dataSource(2))) {
      LocalMessages lm = fx.build(fx.builder());
      EngineListener meters = MicrometerMetrics.bind(registry, lm.admin());
      meters.saved("t.c", false);
      meters.saved("t.c", true);
      meters.saveFailed("t.c", new IllegalStateException("database away"));
      meters.claimed("t.c", 7, 2, Duration.ofMillis(1));
      meters.casConflicts("t.c", 3);
      meters.leaseRenewed("t.c", 5);
      meters.fenced("t.c", 11);
      meters.writeBackDropped("t.c", 13);
      meters.expiredLastAttempt(4);
      meters.wakeUpSent(6);

      Map<String, Double> expected = new LinkedHashMap<>();
      expected.put("localmessage.saves", 2.0);
      expected.put("localmessage.saves.duplicate", 1.0);
      expected.put("localmessage.saves.failed", 1.0);
      expected.put("localmessage.claimed", 7.0);
      expected.put("localmessage.lease.reclaims", 2.0);
      expected.put("localmessage.cas.conflicts", 3.0);
      expected.put("localmessage.lease.renewals", 5.0);
      expected.put("localmessage.fenced", 11.0);
      expected.put("localmessage.writeback.dropped", 13.0);
      expected.forEach(
          (name, amount) ->
              assertThat(registry.get(name).tag("biz_type", "t.c").counter().count())
                  .as(name)
                  .isEqualTo(amount));
      assertThat(registry.get("localmessage.expired.last.attempt").counter().count())
          .isEqualTo(4.0);
      assertThat(registry.get("localmessage.wakeups.sent").counter().count()).isEqualTo(1.0);
      assertThat(registry.get("localmessage.wakeups.requested").counter().count()).isEqualTo(6.0);
    }
  }

  @Test
  void duplicatesAreCountedApartFromTheSavesThatInsertedAMessage() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (EngineFixture fx = new EngineFixture(db.dataSource(2))) {
      LocalMessages lm = fx.build(fx.builder());
      EngineListener meters = MicrometerMetrics.bind(registry, lm.admin());
      meters.saved("t.c", false);
      meters.saved("t.c", false);
      meters.saved("t.c", true);
      assertThat(registry.get("localmessage.saves").tag("biz_type", "t.c").counter().count())
          .isEqualTo(3.0);
      assertThat(
              registry.get("localmessage.saves.duplicate").tag("biz_type", "t.c").counter().count())
          .isEqualTo(1.0);
    }
  }

  @Test
  void aTypeGetsItsBacklogGaugesAtItsFirstSaveOrClaimBeforeAnyScrape() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (EngineFixture fx = new EngineFixture(db.dataSource(2))) {
      LocalMessages lm = fx.build(fx.builder());
      EngineListener meters = MicrometerMetrics.bind(registry, lm.admin());
      meters.saved("t.saved", false);
      meters.claimed("t.claimed", 1, 0, Duration.ofMillis(1));
      // a dashboard lists the series a registry holds; a type must not wait for a backlog read
      for (String type : java.util.List.of("t.saved", "t.claimed")) {
        for (String name : java.util.List.of("pending", "due", "in.flight", "dead")) {
          assertThat(registry.find("localmessage." + name).tag("biz_type", type).gauge())
              .as(name + " of " + type)
              .isNotNull();
        }
      }
    }
  }

  @Test
  void whileTheBacklogCannotBeReadTheGaugesShowNoValueRatherThanAWrongOne() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (EngineFixture fx = new EngineFixture(db.dataSource(2))) {
      LocalMessages lm = fx.build(fx.builder());
      EngineListener meters = MicrometerMetrics.bind(registry, lm.admin());
      meters.saved("t.a", false);
      Sql.update(fx.dataSource, "DROP TABLE " + fx.table);
      // NaN is "no data" to Prometheus; 0 would read as an empty backlog and silence alerts
      assertThat(registry.get("localmessage.types").gauge().value()).isNaN();
      assertThat(registry.get("localmessage.pending").tag("biz_type", "t.a").gauge().value())
          .isNaN();
    }
  }

  @Test
  void coreMetersAreTaggedByBizType() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (EngineFixture fx = new EngineFixture(db.dataSource(4))) {
      LocalMessages lm = fx.build(fx.builder().meterRegistry(registry));
      lm.register("t.ok", m -> {}, EngineFixture.config().build());
      lm.register(
          "t.bad",
          m -> {
            throw new PermanentFailure("no");
          },
          EngineFixture.config().build());
      fx.save(lm, NewMessage.action("t.ok", "a").build());
      fx.save(lm, NewMessage.action("t.ok", "a").build());
      fx.save(lm, NewMessage.action("t.bad", "b").build());
      assertThat(lm.runOnce()).isEqualTo(2);

      assertThat(registry.get("localmessage.saves").tag("biz_type", "t.ok").counter().count())
          .isEqualTo(2);
      assertThat(
              registry
                  .get("localmessage.saves.duplicate")
                  .tag("biz_type", "t.ok")
                  .counter()
                  .count())
          .isEqualTo(1);
      assertThat(
              registry
                  .get("localmessage.deliveries")
                  .tag("biz_type", "t.ok")
                  .tag("result", "success")
                  .counter()
                  .count())
          .isEqualTo(1);
      assertThat(
              registry
                  .get("localmessage.deliveries")
                  .tag("biz_type", "t.bad")
                  .tag("result", "permanent")
                  .counter()
                  .count())
          .isEqualTo(1);
      assertThat(registry.get("localmessage.end.to.end").tag("biz_type", "t.ok").timer().count())
          .isEqualTo(1);
      assertThat(
              registry
                  .get("localmessage.attempts.per.success")
                  .tag("biz_type", "t.ok")
                  .summary()
                  .mean())
          .isEqualTo(1.0);
      assertThat(
              registry.get("localmessage.claim.duration").tag("biz_type", "t.ok").timer().count())
          .isEqualTo(1);
      assertThat(registry.get("localmessage.dead").tag("biz_type", "t.bad").gauge().value())
          .isEqualTo(1.0);
      assertThat(registry.get("localmessage.pending").tag("biz_type", "t.ok").gauge().value())
          .isZero();
    }
  }

  @Test
  void theBacklogGaugesShowPendingDueInFlightDeadAndAgesReadAtMostOncePerInterval() {
    try (EngineFixture fx = new EngineFixture(db.dataSource(4))) {
      LocalMessages lm = fx.build(fx.builder());
      SaveResult old = fx.save(lm, NewMessage.action("t.g", "k1").build());
      SaveResult due = fx.save(lm, NewMessage.action("t.g", "k2").build());
      SaveResult leased = fx.save(lm, NewMessage.action("t.g", "k3").build());
      SaveResult dead = fx.save(lm, NewMessage.action("t.d", "k1").build());
      io.localmessage.spi.Dialect d = dialect(fx);
      String ago = d.plusMillis(d.now());
      Sql.update(
          fx.dataSource,
          "UPDATE " + fx.table + " SET created_at = " + ago + " WHERE id = ?",
          -120_000L,
          old.id());
      Sql.update(
          fx.dataSource,
          "UPDATE "
              + fx.table
              + " SET lease_owner = 'other', next_retry_at = "
              + ago
              + " WHERE id = ?",
          3_600_000L,
          leased.id());
      Sql.update(
          fx.dataSource,
          "UPDATE " + fx.table + " SET status = 2, updated_at = " + ago + " WHERE id = ?",
          -300_000L,
          dead.id());
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      MicrometerMetrics.bind(registry, lm.admin());

      assertThat(registry.get("localmessage.types").gauge().value()).isEqualTo(2);
      assertThat(gauge(registry, "pending", "t.g")).isEqualTo(3);
      assertThat(gauge(registry, "due", "t.g")).as("the leased one is not due").isEqualTo(2);
      assertThat(gauge(registry, "in.flight", "t.g")).isEqualTo(1);
      assertThat(gauge(registry, "dead", "t.g")).isZero();
      assertThat(gauge(registry, "dead", "t.d")).isEqualTo(1);
      assertThat(gauge(registry, "pending", "t.d")).isZero();
      assertThat(gauge(registry, "oldest.pending.age.seconds", "t.g")).isBetween(119.0, 150.0);
      assertThat(gauge(registry, "oldest.dead.age.seconds", "t.d")).isBetween(299.0, 330.0);

      Sql.update(fx.dataSource, "DELETE FROM " + fx.table + " WHERE id = ?", due.id());
      assertThat(gauge(registry, "due", "t.g"))
          .as("a scrape within %s reads the cached backlog", MicrometerMetrics.STATS_TTL)
          .isEqualTo(2);
    }
  }

  private static double gauge(SimpleMeterRegistry r, String name, String type) {
    return r.get("localmessage." + name).tag("biz_type", type).gauge().value();
  }

  private static io.localmessage.spi.Dialect dialect(EngineFixture fx) {
    try (java.sql.Connection c = fx.dataSource.getConnection()) {
      return io.localmessage.spi.Dialects.detect(c);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aTypeWithOnlyDeadLettersIsGaugedByAReplicaThatNeverSawIt() {
    try (EngineFixture fx = new EngineFixture(db.dataSource(4))) {
      LocalMessages before = fx.build(fx.builder());
      before.register(
          "t.dead",
          m -> {
            throw new PermanentFailure("no");
          },
          EngineFixture.config().build());
      fx.save(before, NewMessage.action("t.dead", "a").build());
      fx.save(before, NewMessage.action("t.dead", "b").build());
      assertThat(before.runOnce()).isEqualTo(2);
      before.close();
      // a restarted replica that neither saves nor claims that type: the scrape still sees it
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      fx.build(fx.builder().meterRegistry(registry));
      assertThat(registry.get("localmessage.types").gauge().value()).isEqualTo(1);
      assertThat(registry.get("localmessage.dead").tag("biz_type", "t.dead").gauge().value())
          .isEqualTo(2);
    }
  }

  @Test
  void renewalsAndFencedExecutionsAreCounted() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (EngineFixture fx = new EngineFixture(db.dataSource(4))) {
      LocalMessages lm =
          fx.build(fx.builder().lease(java.time.Duration.ofMillis(1200)).meterRegistry(registry));
      java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
      lm.register("t.long", m -> release.await(), EngineFixture.config().build());
      lm.start();
      SaveResult s = fx.save(lm, NewMessage.action("t.long", "a").build());
      org.awaitility.Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(5))
          .until(
              () ->
                  registry.find("localmessage.lease.renewals").tag("biz_type", "t.long").counter()
                      != null);
      io.localmessage.testing.Sql.update(
          fx.dataSource, "UPDATE " + fx.table + " SET version = version + 1 WHERE id = ?", s.id());
      org.awaitility.Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(5))
          .until(
              () ->
                  registry.find("localmessage.fenced").tag("biz_type", "t.long").counter() != null
                      && registry
                              .get("localmessage.fenced")
                              .tag("biz_type", "t.long")
                              .counter()
                              .count()
                          == 1.0);
      release.countDown();
    }
  }

  @Test
  void everyAddedListenerAndTheMeterBindingSeeEveryEvent() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    EngineFixture.Counting first = new EngineFixture.Counting();
    EngineFixture.Counting second = new EngineFixture.Counting();
    try (EngineFixture fx = new EngineFixture(db.dataSource(4))) {
      LocalMessages lm =
          fx.build(fx.builder().listener(first).listener(second).meterRegistry(registry));
      lm.register("t.ok", m -> {}, EngineFixture.config().build());
      fx.save(lm, NewMessage.action("t.ok", "a").build());
      fx.save(lm, NewMessage.action("t.ok", "a").build());
      assertThat(lm.runOnce()).isEqualTo(1);
      for (EngineFixture.Counting c : java.util.List.of(first, second)) {
        assertThat(c.duplicates.get()).isEqualTo(1);
        assertThat(c.count(io.localmessage.spi.EngineListener.Result.SUCCESS)).isEqualTo(1);
      }
      assertThat(registry.get("localmessage.saves").tag("biz_type", "t.ok").counter().count())
          .isEqualTo(2);
    }
  }

  @Test
  void aRegistryOfTheWrongTypeIsRejected() {
    try (EngineFixture fx = new EngineFixture(db.dataSource(2))) {
      assertThatThrownBy(() -> fx.build(fx.builder().meterRegistry("not a registry")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("must be an io.micrometer.core.instrument.MeterRegistry");
    }
  }
}
