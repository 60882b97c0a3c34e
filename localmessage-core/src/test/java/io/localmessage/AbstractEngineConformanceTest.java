package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.admin.MessageView;
import io.localmessage.internal.engine.Engines;
import io.localmessage.internal.store.MessageQueue;
import io.localmessage.internal.store.Tables;
import io.localmessage.spi.Dialects;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.Waits;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine and store contract, run against every supported database by a subclass per dialect
 * (STYLE rule 6). Each invariant of DESIGN section 3 has a test named after it. Time moves by
 * rewriting {@code next_retry_at} (a lease "runs out" when a test makes it due), never by sleeping.
 */
public abstract class AbstractEngineConformanceTest extends DatabaseTest {
  @Override
  protected int poolSize() {
    return 12;
  }

  private static NewMessage action(String type, String key) {
    return NewMessage.action(type, key).payload("{\"n\":1}").build();
  }

  private void createBusinessTable() {
    Sql.update(ds, "CREATE TABLE " + fx.table + "_biz (id VARCHAR(64) PRIMARY KEY)");
  }

  // ------------------------------------------------------------------ invariant 1: save

  @Test
  void invariant1_saveWritesThroughCallersTransactionAndNeverCommits() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      SaveResult r = lm.save(c, action("t.a", "k1"));
      assertThat(r.duplicate()).isFalse();
      assertThat(r.id()).isPositive();
      assertThat(c.getAutoCommit()).isFalse();
      c.rollback();
    }
    assertThat(fx.countAll()).as("a rolled back save leaves nothing").isZero();

    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      lm.save(c, action("t.a", "k1"));
      assertThat(fx.countAll()).as("not visible before the caller commits").isZero();
      c.commit();
    }
    assertThat(fx.countAll()).isEqualTo(1);
  }

  @Test
  void invariant1_saveOnAutocommitConnectionIsRefusedAndWritesNothing() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(true);
      assertThatThrownBy(() -> lm.save(c, action("t.a", "k1")))
          .isInstanceOf(TransactionRequiredException.class)
          .hasMessageContaining("autocommit")
          .hasMessageContaining("Nothing was written");
      assertThat(c.getAutoCommit()).isTrue();
    }
    assertThat(fx.countAll()).isZero();
  }

  @Test
  void invariant1_duplicateSaveIsANoOpThatLeavesTheTransactionUsable() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    createBusinessTable();
    SaveResult first = fx.save(lm, action("t.a", "same"));
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      SaveResult dup = lm.save(c, NewMessage.action("t.a", "same").payload("other").build());
      assertThat(dup.duplicate()).isTrue();
      assertThat(dup.id()).isEqualTo(first.id());
      // the transaction must still accept work and commit it (PostgreSQL would abort it on an
      // unhandled unique violation)
      try (PreparedStatement ps =
          c.prepareStatement("INSERT INTO " + fx.table + "_biz (id) VALUES (?)")) {
        ps.setString(1, "order-1");
        ps.executeUpdate();
      }
      SaveResult other = lm.save(c, action("t.a", "other"));
      assertThat(other.duplicate()).isFalse();
      c.commit();
    }
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_biz")).isEqualTo(1);
    assertThat(fx.countAll()).isEqualTo(2);
    assertThat(Sql.string(ds, "SELECT payload FROM " + fx.table + " WHERE id = ?", first.id()))
        .as("the duplicate did not overwrite the original")
        .isNotNull();
    assertThat(new String(lm.admin().payload(first.id()).orElseThrow(), StandardCharsets.UTF_8))
        .isEqualTo("{\"n\":1}");
  }

  @Test
  void invariant1_sameKeyInAnotherBizTypeIsNotADuplicate() {
    LocalMessages lm = fx.build(fx.builder());
    assertThat(fx.save(lm, action("t.a", "k")).duplicate()).isFalse();
    assertThat(fx.save(lm, action("t.b", "k")).duplicate()).isFalse();
    assertThat(fx.save(lm, action("t.a", "K")).duplicate()).as("keys are case-sensitive").isFalse();
  }

  @Test
  void invariant1_keyOfADeletedSuccessCanBeSavedAgain() {
    LocalMessages lm = fx.build(fx.builder().concurrency(2));
    AtomicInteger runs = new AtomicInteger();
    lm.register("t.a", m -> runs.incrementAndGet(), EngineFixture.config().build());
    fx.save(lm, action("t.a", "k"));
    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(fx.countAll()).isZero();
    assertThat(fx.save(lm, action("t.a", "k")).duplicate())
        .as("the save-side dedup window ends when the succeeded ticket is deleted")
        .isFalse();
  }

  @Test
  void saveAllSavesInOrderAndReportsDuplicates() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    fx.save(lm, action("t.a", "k2"));
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      List<SaveResult> rs =
          lm.saveAll(c, List.of(action("t.a", "k1"), action("t.a", "k2"), action("t.a", "k3")));
      c.commit();
      assertThat(rs).extracting(SaveResult::duplicate).containsExactly(false, true, false);
    }
    assertThat(fx.countAll()).isEqualTo(3);
  }

  // ------------------------------------------------------------------ bad input

  @Test
  void badInputIsRejectedWithAClearMessageAndNothingIsWritten() throws Exception {
    LocalMessages lm = fx.build(fx.builder().maxPayloadBytes(16));
    String long65 = "x".repeat(65);
    String long129 = "k".repeat(129);
    assertThatThrownBy(() -> NewMessage.action(null, "k").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bizType must not be null");
    assertThatThrownBy(() -> NewMessage.action(" ", "k").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bizType must not be blank");
    assertThatThrownBy(() -> NewMessage.action(long65, "k").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bizType is 65 characters, longer than the limit 64");
    assertThatThrownBy(() -> NewMessage.action("bad type", "k").build())
        .hasMessageContaining("characters outside");
    assertThatThrownBy(() -> NewMessage.action("t.a", null).build())
        .hasMessage("idemKey must not be null");
    assertThatThrownBy(() -> NewMessage.action("t.a", "").build())
        .hasMessage("idemKey must not be blank");
    assertThatThrownBy(() -> NewMessage.action("t.a", long129).build())
        .hasMessage("idemKey is 129 characters, longer than the limit 128");
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").aggregateId(long129).build())
        .hasMessage("aggregateId is 129 characters, longer than the limit 128");
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").maxAttempts(0))
        .hasMessage("maxAttempts must be at least 1, was 0");
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      NewMessage big = NewMessage.action("t.a", "big").payload(new byte[17]).build();
      assertThatThrownBy(() -> lm.save(c, big))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("payload of 't.a' / 'big' is 17 bytes, larger than maxPayloadBytes 16");
      NewMessage ok = action("t.a", "ok");
      assertThatThrownBy(() -> lm.saveAll(c, java.util.Arrays.asList(ok, big)))
          .as("saveAll validates everything before writing anything")
          .hasMessageContaining("larger than maxPayloadBytes");
      c.commit();
    }
    assertThat(fx.countAll()).isZero();
  }

  @Test
  void badSettingsAreRejectedNamingTheValues() {
    assertThatThrownBy(() -> LocalMessages.builder(ds).table("x; DROP TABLE y"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not a plain SQL identifier");
    assertThatThrownBy(() -> LocalMessages.builder(ds).concurrency(0))
        .hasMessage("concurrency must be between 1 and 20000, was 0");
    assertThatThrownBy(() -> LocalMessages.builder(ds).lease(Duration.ofMillis(1)))
        .hasMessageContaining("lease must be between");
    assertThatThrownBy(() -> fx.builder().lease(Duration.ofSeconds(1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lease PT1S must be longer than twice the write-back margin PT0.5S");
    assertThatThrownBy(() -> fx.builder().maxExecutionTime(Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxExecutionTime must be between");
    assertThatThrownBy(
            () ->
                fx.builder()
                    .lease(Duration.ofSeconds(10))
                    .maxExecutionTime(Duration.ofSeconds(9))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxExecutionTime PT9S must not be shorter than the lease PT10S");
    LocalMessages lm =
        fx.build(
            fx.builder().lease(Duration.ofSeconds(10)).maxExecutionTime(Duration.ofSeconds(20)));
    // a handler timeout longer than the lease is fine (the lease is renewed), but not one that the
    // renewal cap would cut short
    assertThatThrownBy(
            () ->
                lm.register(
                    "t.a",
                    m -> {},
                    HandlerConfig.builder().handlerTimeout(Duration.ofSeconds(30)).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxExecutionTime PT20S is shorter than the handler timeout PT30S")
        .hasMessageContaining("write-back margin PT0.5S");
    lm.register(
        "t.long", m -> {}, EngineFixture.config().handlerTimeout(Duration.ofSeconds(15)).build());
    lm.register("t.a", m -> {}, EngineFixture.config().build());
    assertThatThrownBy(() -> lm.register("t.a", m -> {}, EngineFixture.config().build()))
        .hasMessage("biz type 't.a' is already registered");
    lm.start();
    assertThatThrownBy(() -> lm.register("t.b", m -> {}, EngineFixture.config().build()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("sealed");
  }

  @Test
  void schemaDdlUsesTheConfiguredNamesAndCreatingItTwiceIsHarmless() {
    LocalMessages first = fx.build(fx.builder());
    String ddl = first.schemaDdl();
    assertThat(ddl)
        .contains("CREATE TABLE IF NOT EXISTS " + fx.table + " (")
        .contains(fx.table + "_control")
        .contains(fx.table + "_audit")
        .contains(fx.table + "_inbox")
        .contains("ix_" + fx.table + "_due")
        .doesNotContain("local_message");
    LocalMessages second = fx.build(fx.builder());
    fx.save(second, action("t.a", "k"));
    assertThat(fx.countAll()).isEqualTo(1);
  }

  // ------------------------------------------------------------------ invariant 2: DB clock

  @Test
  void invariant2_replicasInDifferentSessionTimeZonesAgreeOnLeases() throws Exception {
    DataSource east = db.dataSource(4, zone("+13:00"));
    DataSource west = db.dataSource(4, zone("-12:00"));
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    LocalMessages a =
        fx.build(
            fx.builder(east)
                .replicaId("east")
                .lease(Duration.ofSeconds(30))
                .writeBackMargin(Duration.ofSeconds(1)));
    a.register(
        "t.a",
        m -> {
          running.countDown();
          release.await();
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(20)).build());
    LocalMessages b = fx.build(fx.builder(west).replicaId("west"));
    AtomicInteger bRuns = new AtomicInteger();
    b.register("t.a", m -> bRuns.incrementAndGet(), EngineFixture.config().build());

    fx.save(b, action("t.a", "k"));
    assertThat(b.runOnce()).as("a fresh ticket is due for the west replica at once").isEqualTo(1);
    fx.save(b, action("t.a", "k2"));
    a.start();
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    // 13 + 12 hours apart: had either side used its session's local time, the west replica
    // would see the east replica's 30 s lease as long expired (or the reverse)
    assertThat(b.runOnce()).as("the live lease holds across time zones").isZero();
    MessageView t = a.admin().findByIdemKey("k2").get(0);
    Duration left = Duration.between(Sql.instantNow(db, ds), t.nextRetryAt());
    assertThat(left).isBetween(Duration.ofSeconds(20), Duration.ofSeconds(31));
    release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
    assertThat(bRuns.get()).isEqualTo(1);
  }

  /** A zone string each database accepts. */
  protected String zone(String offset) {
    return offset;
  }

  // ------------------------------------------------------------------ invariant 3: crash takeover

  @Test
  void invariant3_crashedWorkersTicketIsTakenOverWhenTheLeaseEnds() throws Exception {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    CountDownLatch running = new CountDownLatch(1);
    LocalMessages a = fx.build(fx.builder().replicaId("a"));
    a.register(
        "t.a",
        m -> {
          running.countDown();
          new CountDownLatch(1).await();
        },
        EngineFixture.config().build());
    LocalMessages b = fx.build(fx.builder().replicaId("b").listener(counting));
    List<Integer> attemptsSeen = Collections.synchronizedList(new ArrayList<>());
    b.register("t.a", m -> attemptsSeen.add(m.attempt()), EngineFixture.config().build());
    fx.save(a, action("t.a", "k"));
    a.start();
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    Engines.halt(a); // kill -9: no write-back, lease not released

    assertThat(b.runOnce()).as("lease still live").isZero();
    assertThat(fx.count("lease_owner = ?", "a")).isEqualTo(1);
    fx.expireLeases();
    assertThat(b.runOnce()).isEqualTo(1);
    assertThat(attemptsSeen).containsExactly(2);
    assertThat(counting.leaseReclaims.get()).isEqualTo(1);
    assertThat(fx.countAll()).isZero();
  }

  // ------------------------------------------------------------------ invariant 4: CAS

  @Test
  void invariant4_staleWorkersCompletionIsDroppedAfterReclaim() throws Exception {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    LocalMessages a =
        fx.build(
            fx.builder()
                .replicaId("a")
                .concurrency(1) // its only slot stays busy: a cannot re-claim the ticket itself
                .listener(counting)
                .lease(Duration.ofSeconds(30))
                .writeBackMargin(Duration.ofSeconds(1)));
    a.register(
        "t.a",
        m -> {
          running.countDown();
          release.await();
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(20)).build());
    LocalMessages b = fx.build(fx.builder().replicaId("b"));
    b.register(
        "t.a",
        m -> {
          throw new IllegalStateException("b fails");
        },
        EngineFixture.config().backoff(Backoff.fixed(Duration.ofMinutes(5))).build());
    SaveResult s = fx.save(a, action("t.a", "k"));
    a.start();
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    fx.expireLeases(); // a overran its lease
    assertThat(b.runOnce()).isEqualTo(1);
    MessageView afterB = a.admin().get(s.id()).orElseThrow();
    assertThat(afterB.attempts()).isEqualTo(2);
    assertThat(afterB.lastError()).contains("b fails");

    release.countDown(); // a now reports success for a ticket it no longer holds
    await().atMost(Duration.ofSeconds(10)).until(() -> counting.casConflicts.get() == 1);
    MessageView end = a.admin().get(s.id()).orElseThrow();
    assertThat(end.status())
        .as("the stale success did not delete the ticket")
        .isEqualTo(MessageStatus.PENDING);
    assertThat(end.version()).isEqualTo(afterB.version());
  }

  @Test
  void invariant4_cancelWhileInFlightWins() throws Exception {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    LocalMessages a = fx.build(fx.builder().listener(counting));
    a.register(
        "t.a",
        m -> {
          running.countDown();
          release.await();
          throw new IllegalStateException("fails after cancel");
        },
        EngineFixture.config().build());
    SaveResult s = fx.save(a, action("t.a", "k"));
    a.start();
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    // a live lease refuses the cancel
    assertThatThrownBy(() -> a.admin().cancel(s.id(), "ops", "customer withdrew"))
        .isInstanceOf(MessageInFlightException.class);
    // what the refusal advises: pause the type, so the ticket is not claimed again meanwhile
    a.admin().pause("t.a", "ops", "cancelling a ticket");
    // a pause holds from the next claim round on: let the poller finish the round it may be in
    // (begun before the pause, it would claim the ticket again once it is due below)
    Instant seen = pollerLastSuccess(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> !Objects.equals(pollerLastSuccess(a), seen));
    // the worker loses its lease (ran out, taken over: the version moved on); it is now stale,
    // and the cancel goes through while its handler still runs
    Sql.update(
        ds,
        "UPDATE "
            + fx.table
            + " SET next_retry_at = created_at, version = version + 1 WHERE id = ?",
        s.id());
    assertThat(a.admin().cancel(s.id(), "ops", "customer withdrew")).isTrue();
    release.countDown();
    // the stale outcome is dropped: by the renewal's fence or by the write-back's version check
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> counting.casConflicts.get() + counting.fenced.get() >= 1);
    assertThat(a.admin().get(s.id()).orElseThrow().status()).isEqualTo(MessageStatus.CANCELED);
    assertThat(a.admin().audit(s.id())).extracting(e -> e.action()).containsExactly("CANCEL");
  }

  /** When the poller last finished an iteration: each round of claims ends with one. */
  private static Instant pollerLastSuccess(LocalMessages lm) {
    return lm.health().loops().stream()
        .filter(l -> l.name().equals("poller"))
        .map(EngineHealth.Loop::lastSuccess)
        .findFirst()
        .orElseThrow();
  }

  // ------------------------------------------------------------------ invariant 5: free slots

  @Test
  void invariant5_claimsOnlyAsManyAsFreeSlotsPerTypeAndInTotal() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger runningA = new AtomicInteger();
    AtomicInteger runningB = new AtomicInteger();
    LocalMessages lm = fx.build(fx.builder().concurrency(3));
    lm.register(
        "t.a",
        m -> {
          runningA.incrementAndGet();
          release.await();
        },
        EngineFixture.config().concurrency(1).build());
    lm.register(
        "t.b",
        m -> {
          runningB.incrementAndGet();
          release.await();
        },
        EngineFixture.config().build());
    fx.saveMany(lm, "t.a", 10, null);
    fx.saveMany(lm, "t.b", 10, null);
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> runningA.get() + runningB.get() == 3);
    // several poll intervals later nothing more is claimed: leased == running
    Waits.holds(
        "leased == running",
        Duration.ofMillis(300),
        () ->
            fx.count("lease_owner IS NOT NULL") == 3 && runningA.get() == 1 && runningB.get() == 2);
    release.countDown();
    await().atMost(Duration.ofSeconds(20)).until(() -> fx.countAll() == 0);
  }

  @Test
  void slotsLeftByIdleTypesGoToTheBusyTypeInTheNextClaim() throws Exception {
    // six types registered, a backlog in one: the first claim round shares the free slots fairly
    // (two each), the busy type fills its share, and the next round gives it every slot the idle
    // types left, instead of two more per statement
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger running = new AtomicInteger();
    java.util.List<Integer> claimSizes = new java.util.concurrent.CopyOnWriteArrayList<>();
    LocalMessages lm =
        fx.build(
            fx.builder()
                .concurrency(12)
                .pollInterval(Duration.ofSeconds(30)) // only the claims a full claim asks for
                .listener(
                    new io.localmessage.spi.EngineListener() {
                      @Override
                      public void claimed(
                          String bizType, int claimed, int reclaims, Duration queryTime) {
                        if (bizType.equals("t.busy")) {
                          claimSizes.add(claimed);
                        }
                      }
                    }));
    lm.register(
        "t.busy",
        m -> {
          running.incrementAndGet();
          release.await();
        },
        EngineFixture.config().build());
    for (int i = 0; i < 5; i++) {
      lm.register("t.idle" + i, m -> {}, EngineFixture.config().build());
    }
    fx.saveMany(lm, "t.busy", 40, null);
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> running.get() == 12);
    assertThat(claimSizes).as("claims of the busy type").hasSize(2).containsExactly(2, 10);
    release.countDown();
    await().atMost(Duration.ofSeconds(20)).until(() -> fx.countAll() == 0);
  }

  // ------------------------------------------------------------------ invariant 6: attempts

  @Test
  void invariant6_crashLoopingTicketGoesDeadThroughAttemptsCountedAtClaim() throws Exception {
    SaveResult s = null;
    for (int round = 1; round <= 3; round++) {
      CountDownLatch running = new CountDownLatch(1);
      LocalMessages e = fx.build(fx.builder().replicaId("r" + round));
      e.register(
          "t.a",
          m -> {
            running.countDown();
            new CountDownLatch(1).await(); // the handler takes the worker down with it
          },
          EngineFixture.config().maxAttempts(3).build());
      if (s == null) {
        s = fx.save(e, action("t.a", "k"));
      }
      e.start();
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
      Engines.halt(e);
      fx.expireLeases();
    }
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages survivor = fx.build(fx.builder().listener(counting));
    AtomicInteger ran = new AtomicInteger();
    survivor.register(
        "t.a", m -> ran.incrementAndGet(), EngineFixture.config().maxAttempts(3).build());
    assertThat(survivor.runOnce()).as("no fourth delivery").isZero();
    MessageView t = survivor.admin().get(s.id()).orElseThrow();
    assertThat(t.status()).isEqualTo(MessageStatus.DEAD);
    assertThat(t.attempts()).isEqualTo(3);
    assertThat(t.lastError()).contains("lease ended without an outcome");
    assertThat(ran.get()).isZero();
    assertThat(counting.expired.get()).isEqualTo(1);
  }

  /**
   * A crash writes nothing afterwards, so neither may a halted engine: a sweep, write-back or
   * renewal under way when it halts must be over when halt returns, or it lands on rows the next
   * replica (or the test) already changed. Each loop is held on its way to the database.
   */
  @ParameterizedTest
  @ValueSource(strings = {"lm-maintenance-", "lm-writer-", "lm-renewer-"})
  void haltReturnsOnlyOnceItsLoopsHaveLeftTheDatabase(String loop) throws Exception {
    fx.build(fx.builder()); // creates the tables
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    // held at its first way to the database: borrowing a connection, or a statement on one it
    // keeps (the renewer keeps its connection while executions are in flight)
    Runnable holdIfLoop =
        () -> {
          if (!Thread.currentThread().getName().startsWith(loop + "halting")
              || held.getCount() == 0) {
            return;
          }
          held.countDown();
          // a driver deep in a statement does not answer interrupts
          boolean interrupted = false;
          while (true) {
            try {
              release.await(20, TimeUnit.SECONDS);
              break;
            } catch (InterruptedException e) {
              interrupted = true;
            }
          }
          if (interrupted) {
            Thread.currentThread().interrupt();
          }
        };
    DataSource holding =
        (DataSource)
            java.lang.reflect.Proxy.newProxyInstance(
                DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("getConnection")) {
                    holdIfLoop.run();
                  }
                  Object result;
                  try {
                    result = method.invoke(ds, args);
                  } catch (java.lang.reflect.InvocationTargetException e) {
                    throw e.getCause();
                  }
                  if (!(result instanceof Connection c)) {
                    return result;
                  }
                  return java.lang.reflect.Proxy.newProxyInstance(
                      Connection.class.getClassLoader(),
                      new Class<?>[] {Connection.class},
                      (p2, m2, a2) -> {
                        if (m2.getName().startsWith("prepare")
                            || m2.getName().equals("createStatement")) {
                          holdIfLoop.run();
                        }
                        try {
                          return m2.invoke(c, a2);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                          throw e.getCause();
                        }
                      });
                });
    LocalMessages lm = fx.build(fx.builder(holding).replicaId("halting"));
    CountDownLatch inside = new CountDownLatch(1);
    lm.register(
        "t.a",
        m -> {
          if (!loop.equals("lm-writer-")) {
            inside.countDown();
            new CountDownLatch(1).await(); // the renewer needs an execution in flight
          }
        },
        EngineFixture.config().build());
    fx.save(lm, action("t.a", "k"));
    lm.start();
    assertThat(held.await(15, TimeUnit.SECONDS)).as(loop + " reached the database").isTrue();
    java.util.concurrent.ExecutorService halter =
        java.util.concurrent.Executors.newSingleThreadExecutor(r -> new Thread(r, "test-halter"));
    try {
      java.util.concurrent.Future<?> halted = halter.submit(() -> Engines.halt(lm));
      assertThatThrownBy(() -> halted.get(300, TimeUnit.MILLISECONDS))
          .as("halt returned while " + loop + " was still on its way to the database")
          .isInstanceOf(java.util.concurrent.TimeoutException.class);
      release.countDown();
      halted.get(10, TimeUnit.SECONDS);
      // a pool reports terminated as its last thread runs out: the thread itself ends a moment
      // later, with nothing left to write
      await()
          .atMost(Duration.ofSeconds(2))
          .untilAsserted(
              () ->
                  assertThat(
                          Thread.getAllStackTraces().keySet().stream()
                              .filter(t -> t.getName().startsWith(loop + "halting") && t.isAlive()))
                      .as("threads of the halted loop")
                      .isEmpty());
    } finally {
      release.countDown();
      halter.shutdownNow();
    }
  }

  @Test
  void invariant6_runningEngineSweepsALastAttemptWhoseLeaseRunsOutWhileItWatches()
      throws Exception {
    CountDownLatch running = new CountDownLatch(1);
    LocalMessages crashing =
        fx.build(fx.builder().replicaId("crashing").lease(Duration.ofSeconds(3)));
    crashing.register(
        "t.a",
        m -> {
          running.countDown();
          new CountDownLatch(1).await();
        },
        EngineFixture.config().maxAttempts(1).build());
    SaveResult s = fx.save(crashing, action("t.a", "k"));
    crashing.start();
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    Engines.halt(crashing);
    // the watcher's first sweep (a full one) runs now, while the lease still has seconds to go;
    // the lease runs out later, so only its windowed sweeps can find it
    LocalMessages watcher = fx.build(fx.builder().replicaId("watcher"));
    AtomicInteger ran = new AtomicInteger();
    watcher.register(
        "t.a", m -> ran.incrementAndGet(), EngineFixture.config().maxAttempts(1).build());
    watcher.start();
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> watcher.admin().get(s.id()).orElseThrow().status() == MessageStatus.DEAD);
    assertThat(watcher.admin().get(s.id()).orElseThrow().lastError())
        .contains("lease ended without an outcome");
    assertThat(ran.get()).as("no second delivery").isZero();
  }

  @Test
  void sweepWindowLooksOnlyAtLeasesThatEndedInsideIt() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    MessageQueue store;
    try (Connection c = ds.getConnection()) {
      store = new MessageQueue(ds, Dialects.detect(c), Tables.of(fx.table, fx.table + "_inbox"));
    }
    // a last attempt whose lease ended an hour ago
    Sql.update(
        ds,
        "UPDATE "
            + fx.table
            + " SET attempts = 1, max_attempts = 1, lease_owner = 'gone', next_retry_at = "
            + store.dialect().plusMillis(store.dialect().now())
            + " WHERE id = ?",
        -3_600_000L,
        s.id());
    assertThat(store.expireExhausted(Set.of("t.a"), "swept", () -> 60_000L))
        .as("outside a one-minute window")
        .isEqualTo(new MessageQueue.Sweep(0, 0));
    assertThat(fx.count("status = 0")).isEqualTo(1);
    assertThat(store.expireExhausted(Set.of("t.a"), "swept", null))
        .as("a full sweep")
        .isEqualTo(new MessageQueue.Sweep(1, 1));
    assertThat(fx.count("status = 2")).isEqualTo(1);
  }

  @Test
  void sweepWindowIsMeasuredAfterTheWaitForAConnection() throws Exception {
    fx.build(fx.builder()); // creates the tables
    AtomicInteger handedOut = new AtomicInteger();
    DataSource counting =
        (DataSource)
            java.lang.reflect.Proxy.newProxyInstance(
                DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                  Object r = method.invoke(ds, args);
                  if (method.getName().equals("getConnection")) {
                    handedOut.incrementAndGet();
                  }
                  return r;
                });
    MessageQueue store;
    try (Connection c = ds.getConnection()) {
      store =
          new MessageQueue(counting, Dialects.detect(c), Tables.of(fx.table, fx.table + "_inbox"));
    }
    AtomicInteger connectionsWhenMeasured = new AtomicInteger(-1);
    store.expireExhausted(
        Set.of("t.a"),
        "swept",
        () -> {
          connectionsWhenMeasured.set(handedOut.get());
          return 60_000L;
        });
    // a window measured before a long wait for a pooled connection would leave a gap behind it
    assertThat(connectionsWhenMeasured.get()).isEqualTo(1);
  }

  @Test
  void retryableFailuresBackOffThenGoDeadWhenAttemptsRunOut() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = fx.build(fx.builder().listener(counting));
    AtomicInteger calls = new AtomicInteger();
    lm.register(
        "t.a",
        m -> {
          calls.incrementAndGet();
          throw new java.io.IOException("channel unreachable");
        },
        EngineFixture.config().maxAttempts(3).backoff(Backoff.fixed(Duration.ofHours(1))).build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView t = lm.admin().get(s.id()).orElseThrow();
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.lastError()).isEqualTo("java.io.IOException: channel unreachable");
    assertThat(Duration.between(Sql.instantNow(db, ds), t.nextRetryAt()))
        .as("backoff is applied on the database clock")
        .isBetween(Duration.ofMinutes(59), Duration.ofMinutes(61));
    assertThat(lm.runOnce()).as("not due during backoff").isZero();
    fx.expireLeases();
    assertThat(lm.runOnce()).isEqualTo(1);
    fx.expireLeases();
    assertThat(lm.runOnce()).isEqualTo(1);
    t = lm.admin().get(s.id()).orElseThrow();
    assertThat(t.status()).isEqualTo(MessageStatus.DEAD);
    assertThat(t.attempts()).isEqualTo(3);
    assertThat(t.lastError()).startsWith("attempts exhausted (3/3): java.io.IOException");
    assertThat(calls.get()).isEqualTo(3);
    assertThat(counting.count(io.localmessage.spi.EngineListener.Result.EXHAUSTED)).isEqualTo(1);
  }

  @Test
  void permanentFailureGoesDeadAtOnceWithRedactedTruncatedError() {
    LocalMessages lm =
        fx.build(fx.builder().errorRedactor(e -> e.replaceAll("card=\\d+", "card=****")));
    lm.register(
        "t.a",
        m -> {
          throw new PermanentFailure("rejected card=4111111111111111 " + "x".repeat(2000));
        },
        EngineFixture.config().build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView t = lm.admin().get(s.id()).orElseThrow();
    assertThat(t.status()).isEqualTo(MessageStatus.DEAD);
    assertThat(t.attempts()).isEqualTo(1);
    assertThat(t.lastError()).hasSize(1024).contains("card=****").doesNotContain("4111");
  }

  @Test
  void retryAfterPostponesWithoutUsingAnAttempt() {
    LocalMessages lm = fx.build(fx.builder());
    lm.register(
        "t.a",
        m -> {
          throw new RetryAfter(Duration.ofMinutes(10), "payment still processing");
        },
        EngineFixture.config().maxAttempts(1).build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    for (int i = 0; i < 3; i++) {
      assertThat(lm.runOnce()).isEqualTo(1);
      MessageView t = lm.admin().get(s.id()).orElseThrow();
      assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
      assertThat(t.attempts()).isZero();
      assertThat(t.lastError()).isEqualTo("payment still processing");
      assertThat(Duration.between(Sql.instantNow(db, ds), t.nextRetryAt()))
          .isBetween(Duration.ofMinutes(9), Duration.ofMinutes(11));
      fx.expireLeases();
    }
  }

  @Test
  void handlerTimeoutInterruptsAndRetries() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = fx.build(fx.builder().listener(counting));
    AtomicInteger interrupted = new AtomicInteger();
    lm.register(
        "t.a",
        m -> {
          try {
            Thread.sleep(60_000); // the handler under test hangs; the engine must cut it off
          } catch (InterruptedException e) {
            interrupted.incrementAndGet();
            throw e;
          }
        },
        EngineFixture.config().handlerTimeout(Duration.ofMillis(200)).build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView t = lm.admin().get(s.id()).orElseThrow();
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.lastError()).isEqualTo("handler timed out after PT0.2S");
    await().atMost(Duration.ofSeconds(5)).until(() -> interrupted.get() == 1);
    assertThat(counting.count(io.localmessage.spi.EngineListener.Result.TIMEOUT)).isEqualTo(1);
  }

  @Test
  void maxAgeStopsRetries() {
    LocalMessages lm = fx.build(fx.builder());
    lm.register(
        "t.a",
        m -> {
          throw new IllegalStateException("down");
        },
        EngineFixture.config()
            .maxAge(Duration.ofMinutes(30))
            .backoff(Backoff.fixed(Duration.ofHours(1)))
            .build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView t = lm.admin().get(s.id()).orElseThrow();
    assertThat(t.status()).isEqualTo(MessageStatus.DEAD);
    assertThat(t.lastError()).startsWith("max age PT30M passed: java.lang.IllegalStateException");
  }

  @Test
  void retainedSuccessIsKeptAsSucceededThenPurged() {
    LocalMessages lm = fx.build(fx.builder());
    lm.register("t.a", m -> {}, EngineFixture.config().retainSucceeded(Duration.ofDays(1)).build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(lm.admin().get(s.id()).orElseThrow().status()).isEqualTo(MessageStatus.SUCCEEDED);
    assertThat(fx.save(lm, action("t.a", "k")).duplicate())
        .as("a retained success still blocks the same key")
        .isTrue();
    assertThat(lm.admin().purge(MessageStatus.SUCCEEDED, Duration.ofDays(1))).isZero();
    assertThat(lm.admin().purge(MessageStatus.SUCCEEDED, Duration.ZERO)).isEqualTo(1);
    assertThat(fx.countAll()).isZero();
  }

  @Test
  void eachTypesSuccessesAreKeptForItsOwnRetention() {
    LocalMessages lm = fx.build(fx.builder());
    lm.register(
        "t.a", m -> {}, EngineFixture.config().retainSucceeded(Duration.ofMillis(1)).build());
    lm.register("t.b", m -> {}, EngineFixture.config().retainSucceeded(Duration.ofDays(1)).build());
    SaveResult a = fx.save(lm, action("t.a", "k"));
    SaveResult b = fx.save(lm, action("t.b", "k"));
    EngineFixture.drain(lm);
    // runOnce's maintenance purges t.a's success once it is a millisecond old, not t.b's
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              lm.runOnce();
              return fx.count("id = ?", a.id()) == 0;
            });
    assertThat(lm.admin().get(b.id()).orElseThrow().status()).isEqualTo(MessageStatus.SUCCEEDED);
  }

  @Test
  void aDuplicateSaveAnswersWithTheIdOfItsOwnTypesMessage() {
    LocalMessages lm = fx.build(fx.builder());
    SaveResult a = fx.save(lm, action("t.a", "same-key"));
    SaveResult b = fx.save(lm, action("t.b", "same-key"));
    assertThat(b.duplicate()).as("an idem key is unique per type").isFalse();
    SaveResult again = fx.save(lm, action("t.b", "same-key"));
    assertThat(again.duplicate()).isTrue();
    assertThat(again.id()).isEqualTo(b.id()).isNotEqualTo(a.id());
  }

  @Test
  void batchHandlerCompletesEachTicketFromItsOwnOutcome() {
    LocalMessages lm = fx.build(fx.builder().concurrency(10));
    List<Integer> sizes = Collections.synchronizedList(new ArrayList<>());
    lm.registerBatch(
        "t.e",
        batch -> {
          sizes.add(batch.size());
          List<Outcome> out = new ArrayList<>();
          for (Message m : batch) {
            int n = Integer.parseInt(m.idemKey().substring(2));
            out.add(n == 3 ? Outcome.permanent("too large") : n == 4 ? null : Outcome.success());
          }
          return out;
        },
        EngineFixture.config().batchSize(4).build());
    fx.saveMany(lm, "t.e", 10, null);
    assertThat(lm.runOnce()).isEqualTo(10);
    assertThat(sizes).containsExactlyInAnyOrder(4, 4, 2);
    assertThat(fx.count("status = 2")).isEqualTo(1);
    assertThat(fx.count("status = 0")).as("the missing outcome is retried").isEqualTo(1);
    assertThat(fx.count("status = 0 AND last_error = ?", "batch handler returned no outcome"))
        .isEqualTo(1);
  }

  // ------------------------------------------------------------------ invariant 7: ordering

  @Test
  void invariant7_orderedAggregateRunsStrictlyInOrderAndADeadHeadBlocksOnlyItsAggregate() {
    LocalMessages lm = fx.build(fx.builder().concurrency(8));
    Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
    Set<String> running = ConcurrentHashMap.newKeySet();
    AtomicInteger overlaps = new AtomicInteger();
    java.util.Random random = new java.util.Random(7);
    lm.register(
        "t.o",
        m -> {
          if (!running.add(m.aggregateId())) {
            overlaps.incrementAndGet();
          }
          try {
            int seq = Integer.parseInt(m.idemKey().substring(m.idemKey().lastIndexOf('-') + 1));
            if (m.aggregateId().equals("agg-dead") && seq == 0) {
              throw new PermanentFailure("head rejected");
            }
            synchronized (random) {
              if (random.nextInt(100) < 30) {
                throw new IllegalStateException("flaky");
              }
            }
            seen.computeIfAbsent(
                    m.aggregateId(), a -> Collections.synchronizedList(new ArrayList<>()))
                .add(seq);
          } finally {
            running.remove(m.aggregateId());
          }
        },
        EngineFixture.config()
            .ordered(true)
            .maxAttempts(100)
            .backoff(Backoff.fixed(Duration.ofMillis(5)))
            .build());
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      for (int i = 0; i < 15; i++) {
        for (String agg : List.of("agg-a", "agg-b", "agg-c", "agg-dead")) {
          lm.save(c, NewMessage.action("t.o", agg + "-" + i).aggregateId(agg).build());
        }
      }
      c.commit();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    lm.start();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.count("status = 0") == 14);
    List<Integer> expected = java.util.stream.IntStream.range(0, 15).boxed().toList();
    for (String agg : List.of("agg-a", "agg-b", "agg-c")) {
      assertThat(seen.get(agg)).as(agg).containsExactlyElementsOf(expected);
    }
    assertThat(seen).doesNotContainKey("agg-dead");
    assertThat(overlaps.get()).isZero();
    assertThat(fx.count("status = 2")).isEqualTo(1);

    MessageView head = lm.admin().findByAggregate("agg-dead", 1).get(0);
    assertThat(lm.admin().cancel(head.id(), "ops", "refunded by hand")).isTrue();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.count("status = 0") == 0);
    assertThat(seen.get("agg-dead")).containsExactlyElementsOf(expected.subList(1, 15));
  }

  // ------------------------------------------------------------------ invariant 8: shutdown

  @Test
  void invariant8_closeWaitsThenReleasesLeasesSoAnotherReplicaTakesOverAtOnce() throws Exception {
    CountDownLatch running = new CountDownLatch(2);
    CountDownLatch fastDone = new CountDownLatch(1);
    LocalMessages a =
        fx.build(
            fx.builder().replicaId("a").concurrency(2).shutdownTimeout(Duration.ofMillis(300)));
    a.register(
        "t.slow",
        m -> {
          running.countDown();
          Thread.sleep(60_000); // the handler under test hangs past the shutdown bound
        },
        EngineFixture.config().build());
    a.register(
        "t.fast",
        m -> {
          running.countDown();
          fastDone.await(); // finishes during the graceful wait
        },
        EngineFixture.config().build());
    fx.save(a, action("t.slow", "s"));
    fx.save(a, action("t.fast", "f"));
    a.start();
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    Thread closer = new Thread(a::close, "closer");
    closer.start();
    fastDone.countDown();
    closer.join(10_000);
    assertThat(closer.isAlive()).isFalse();
    assertThat(fx.count("biz_type = 't.fast'")).as("in-flight success written back").isZero();
    assertThat(fx.count("biz_type = 't.slow' AND lease_owner IS NULL")).isEqualTo(1);

    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages b = fx.build(fx.builder().replicaId("b").listener(counting));
    AtomicInteger ran = new AtomicInteger();
    b.register("t.slow", m -> ran.incrementAndGet(), EngineFixture.config().build());
    assertThat(b.runOnce()).as("released lease: due at once").isEqualTo(1);
    assertThat(ran.get()).isEqualTo(1);
    assertThat(counting.leaseReclaims.get()).as("a release is not a crash").isZero();
  }

  // ------------------------------------------------------------------ concurrency across replicas

  @Test
  void twoEnginesNeverRunTheSameTicketConcurrently() {
    Set<Long> running = ConcurrentHashMap.newKeySet();
    AtomicInteger overlaps = new AtomicInteger();
    Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
    Handler h =
        m -> {
          if (!running.add(m.id())) {
            overlaps.incrementAndGet();
          }
          runs.computeIfAbsent(m.id(), k -> new AtomicInteger()).incrementAndGet();
          running.remove(m.id());
        };
    LocalMessages a = fx.build(fx.builder().replicaId("a").concurrency(8));
    LocalMessages b = fx.build(fx.builder().replicaId("b").concurrency(8));
    a.register("t.a", h, EngineFixture.config().build());
    b.register("t.a", h, EngineFixture.config().build());
    fx.saveMany(a, "t.a", 2000, null);
    a.start();
    b.start();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.countAll() == 0);
    assertThat(overlaps.get()).isZero();
    assertThat(runs).hasSize(2000);
    assertThat(runs.values()).allMatch(n -> n.get() == 1);
  }

  @Test
  void inTransactionDispatchesAtOnceWithoutWaitingForThePoller() {
    LocalMessages lm = fx.build(fx.builder().pollInterval(Duration.ofMinutes(10)));
    CountDownLatch ran = new CountDownLatch(1);
    lm.register("t.a", m -> ran.countDown(), EngineFixture.config().build());
    lm.start();
    createBusinessTable();
    lm.inTransaction(
        c -> {
          try (Statement st = c.createStatement()) {
            st.executeUpdate("INSERT INTO " + fx.table + "_biz (id) VALUES ('o1')");
          }
          return lm.save(c, action("t.a", "k"));
        });
    await().atMost(Duration.ofSeconds(5)).until(() -> ran.getCount() == 0);
  }

  @Test
  void inTransactionRollsBackOnFailureAndDispatchesNothing() {
    LocalMessages lm = fx.build(fx.builder());
    assertThatThrownBy(
            () ->
                lm.inTransaction(
                    c -> {
                      lm.save(c, action("t.a", "k"));
                      throw new IllegalStateException("business rule failed");
                    }))
        .hasMessage("business rule failed");
    assertThat(fx.countAll()).isZero();
  }

  // ------------------------------------------------------------------ admin

  @Test
  void pauseIsHonouredAndResumeRestarts() {
    LocalMessages lm = fx.build(fx.builder());
    AtomicInteger ran = new AtomicInteger();
    lm.register("t.a", m -> ran.incrementAndGet(), EngineFixture.config().build());
    fx.save(lm, action("t.a", "k"));
    lm.admin().pause("t.a", "ops", "channel maintenance");
    assertThat(lm.admin().paused()).containsExactly("t.a");
    assertThat(lm.runOnce()).isZero();
    assertThat(lm.admin().stats())
        .filteredOn(s -> s.bizType().equals("t.a"))
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.paused()).isTrue();
              assertThat(s.pending()).isEqualTo(1);
              assertThat(s.dueNow()).isEqualTo(1);
            });
    lm.admin().resume("t.a", "ops", "done");
    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(ran.get()).isEqualTo(1);
  }

  @Test
  void deadLettersCanBeListedRequeuedAndAudited() {
    LocalMessages lm = fx.build(fx.builder());
    AtomicInteger mode = new AtomicInteger();
    lm.register(
        "t.a",
        m -> {
          if (mode.get() == 0) {
            throw new PermanentFailure("rejected");
          }
        },
        EngineFixture.config().build());
    fx.saveMany(lm, "t.a", 5, null);
    assertThat(lm.runOnce()).isEqualTo(5);
    List<MessageView> page1 = lm.admin().listDead("t.a", 0, 3);
    assertThat(page1)
        .hasSize(3)
        .allMatch(t -> t.lastError().equals("io.localmessage.PermanentFailure: rejected"));
    List<MessageView> page2 = lm.admin().listDead("t.a", page1.get(2).id(), 3);
    assertThat(page2).hasSize(2);
    assertThat(lm.admin().stats())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.dead()).isEqualTo(5);
              assertThat(s.pending()).isZero();
            });
    assertThat(lm.admin().requeueDead(List.of(page1.get(0).id()), "alice", "channel fixed"))
        .isEqualTo(1);
    assertThat(lm.admin().get(page1.get(0).id()).orElseThrow().attempts()).isZero();
    assertThat(lm.admin().audit(page1.get(0).id()))
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.action()).isEqualTo("REQUEUE");
              assertThat(a.operator()).isEqualTo("alice");
              assertThat(a.reason()).isEqualTo("channel fixed");
            });
    assertThat(lm.admin().requeueAllDead("t.a", "alice", "channel fixed")).isEqualTo(4);
    mode.set(1);
    assertThat(lm.runOnce()).isEqualTo(5);
    assertThat(fx.countAll()).isZero();
    assertThatThrownBy(() -> lm.admin().requeueDead(List.of(1L), "alice", " "))
        .hasMessage("a reason is required for operator actions");
  }

  @Test
  void findByAggregateAndIdemKey() {
    LocalMessages lm = fx.build(fx.builder());
    fx.save(
        lm, NewMessage.action("t.a", "pay-1").aggregateId("order-9").header("trace", "t1").build());
    fx.save(lm, NewMessage.event("t.b", "paid-1").aggregateId("order-9").build());
    assertThat(lm.admin().findByAggregate("order-9", 10))
        .extracting(MessageView::bizType)
        .containsExactly("t.a", "t.b");
    MessageView t = lm.admin().findByIdemKey("pay-1").get(0);
    assertThat(t.headers()).containsEntry("trace", "t1");
    assertThat(t.kind()).isEqualTo(MessageKind.ACTION);
    assertThat(lm.admin().findByIdemKey("paid-1").get(0).kind()).isEqualTo(MessageKind.EVENT);
  }

  @Test
  void purgeDeletesInBoundedBatches() {
    LocalMessages lm = fx.build(fx.builder().purgeBatchSize(7));
    lm.register(
        "t.a",
        m -> {
          throw new PermanentFailure("no");
        },
        EngineFixture.config().build());
    fx.saveMany(lm, "t.a", 20, null);
    assertThat(lm.runOnce()).isEqualTo(8);
    EngineFixture.drain(lm); // drain
    assertThat(lm.admin().purge(MessageStatus.DEAD, Duration.ofHours(1))).isZero();
    assertThat(lm.admin().purge(MessageStatus.DEAD, Duration.ZERO)).isEqualTo(20);
    assertThatThrownBy(() -> lm.admin().purge(MessageStatus.PENDING, Duration.ZERO))
        .hasMessageContaining("only SUCCEEDED, DEAD or CANCELED");
  }

  // ------------------------------------------------------------------ inbox

  @Test
  void inboxAppliesOnceAndKeepsTheTransactionUsableOnDuplicates() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    createBusinessTable();
    io.localmessage.inbox.Inbox inbox =
        io.localmessage.inbox.Inbox.create(ds, fx.table + "_inbox", null);
    for (int round = 0; round < 2; round++) {
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        boolean applied =
            inbox.applyOnce(
                c,
                "ledger",
                "evt-1",
                conn -> {
                  try (Statement st = conn.createStatement()) {
                    st.executeUpdate("INSERT INTO " + fx.table + "_biz (id) VALUES ('evt-1')");
                  }
                });
        assertThat(applied).isEqualTo(round == 0);
        inbox.tryRecord(c, "ledger", "evt-2");
        c.commit();
      }
    }
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_biz")).isEqualTo(1);
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_inbox")).isEqualTo(2);
    assertThat(inbox.purge(Duration.ofDays(7))).isZero();
    assertThat(inbox.purge(Duration.ZERO)).isEqualTo(2);
    assertThat(lm).isNotNull();
  }

  @Test
  void inboxInItsOwnTransactionCommitsTheEffectOnceAndRollsBackAFailedOne() throws Exception {
    fx.build(fx.builder()).close(); // the tables
    createBusinessTable();
    // one connection handed out again and again, as a single-connection data source does: what
    // the inbox changes on it stays for the next user
    Connection shared = ds.getConnection();
    try {
      DataSource single =
          (DataSource)
              java.lang.reflect.Proxy.newProxyInstance(
                  getClass().getClassLoader(),
                  new Class<?>[] {DataSource.class},
                  (proxy, method, args) ->
                      method.getName().equals("getConnection")
                          ? java.lang.reflect.Proxy.newProxyInstance(
                              getClass().getClassLoader(),
                              new Class<?>[] {Connection.class},
                              (p, m, a) -> m.getName().equals("close") ? null : m.invoke(shared, a))
                          : method.invoke(ds, args));
      io.localmessage.inbox.Inbox inbox =
          io.localmessage.inbox.Inbox.create(single, fx.table + "_inbox", null);
      String insert = "INSERT INTO " + fx.table + "_biz (id) VALUES ('evt-1')";
      io.localmessage.inbox.Inbox.Work effect =
          conn -> {
            try (Statement st = conn.createStatement()) {
              st.executeUpdate(insert);
            }
          };
      assertThat(inbox.applyOnceInTransaction("ledger", "evt-1", effect)).isTrue();
      assertThat(shared.getAutoCommit()).as("the connection's mode is given back").isTrue();
      assertThat(inbox.applyOnceInTransaction("ledger", "evt-1", effect))
          .as("committed: a duplicate now")
          .isFalse();

      assertThatThrownBy(
              () ->
                  inbox.applyOnceInTransaction(
                      "ledger",
                      "evt-2",
                      conn -> {
                        effect.apply(conn); // a duplicate key in the business table
                      }))
          .isInstanceOf(LocalMessageException.class)
          .hasMessageStartingWith("inbox work failed: ");
      assertThatThrownBy(
              () ->
                  inbox.applyOnceInTransaction(
                      "ledger",
                      "evt-3",
                      conn -> {
                        throw new IllegalStateException("ledger closed");
                      }))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("ledger closed");
      assertThat(shared.getAutoCommit()).isTrue();
      assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_biz")).isEqualTo(1);
      assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_inbox"))
          .as("the failed ones left no inbox row: they can be applied later")
          .isEqualTo(1);
      assertThat(inbox.applyOnceInTransaction("ledger", "evt-3", conn -> {})).isTrue();
    } finally {
      shared.close();
    }
  }

  // ------------------------------------------------------------------ volume

  @Test
  void threeEnginesTwentyThousandTicketsThirtyPercentFailures() {
    int n = volume();
    Map<String, AtomicInteger> successes = new ConcurrentHashMap<>();
    AtomicInteger runAfterSuccess = new AtomicInteger();
    Handler h =
        m -> {
          int k = Integer.parseInt(m.idemKey().substring(2));
          if (successes.containsKey(m.idemKey())) {
            runAfterSuccess.incrementAndGet();
          }
          if (k % 100 == 0) {
            throw new PermanentFailure("rejected by design");
          }
          if (java.util.concurrent.ThreadLocalRandom.current().nextInt(100) < 30) {
            throw new IllegalStateException("random failure");
          }
          successes.computeIfAbsent(m.idemKey(), x -> new AtomicInteger()).incrementAndGet();
        };
    List<LocalMessages> engines = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      LocalMessages lm = fx.build(fx.builder().replicaId("r" + i).concurrency(16));
      lm.register(
          "t.v",
          h,
          EngineFixture.config()
              .maxAttempts(30)
              .backoff(Backoff.exponential(Duration.ofMillis(5), Duration.ofMillis(50)).jitter(0.5))
              .build());
      engines.add(lm);
    }
    fx.saveMany(engines.get(0), "t.v", n, null);
    engines.forEach(LocalMessages::start);
    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> fx.count("status = 0") == 0);
    int dead = n / 100;
    assertThat(fx.count("status = 2")).isEqualTo(dead);
    assertThat(
            fx.count(
                "status = 2 AND last_error = ?",
                "io.localmessage.PermanentFailure: rejected by design"))
        .isEqualTo(dead);
    assertThat(fx.countAll()).as("successes are deleted, only the dead remain").isEqualTo(dead);
    assertThat(successes).hasSize(n - dead);
    assertThat(successes.values()).allMatch(c -> c.get() == 1);
    assertThat(runAfterSuccess.get()).isZero();
  }

  /** Tickets in the volume test. */
  protected int volume() {
    return 20_000;
  }
}
