package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.admin.MessageView;
import io.localmessage.internal.engine.Engines;
import io.localmessage.spi.EngineListener;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Intercepting;
import io.localmessage.testing.Sql;
import io.localmessage.testing.StatementLog;
import io.localmessage.testing.Waits;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the engine promises about its own bounds: a paused type is skipped while others run, a
 * closed engine refuses work, shutdown waits at most its timeout, a crashed engine writes nothing,
 * and the counts users alert on (CAS conflicts, swept last attempts) are exact.
 */
public abstract class AbstractEngineBoundsTest extends DatabaseTest {
  private static NewMessage action(String type, String key) {
    return NewMessage.action(type, key).payload("p").build();
  }

  /** Records every call of the count events, including calls that report zero. */
  static final class Recording implements EngineListener {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void casConflicts(String bizType, int count) {
      events.add("cas " + bizType + " " + count);
    }

    @Override
    public void expiredLastAttempt(int count) {
      events.add("expired " + count);
    }
  }

  // ------------------------------------------------------------------ pause

  @Test
  void aPausedTypeIsSkippedWhileAnotherTypeRuns() {
    AtomicInteger ranA = new AtomicInteger();
    AtomicInteger ranB = new AtomicInteger();
    LocalMessages lm = fx.build(fx.builder().concurrency(4));
    lm.register("t.a", m -> ranA.incrementAndGet(), EngineFixture.config().build());
    lm.register("t.b", m -> ranB.incrementAndGet(), EngineFixture.config().build());
    SaveResult a = fx.save(lm, action("t.a", "k"));
    fx.save(lm, action("t.b", "k"));
    lm.admin().pause("t.a", "ops", "channel maintenance");

    assertThat(lm.runOnce()).as("only the unpaused type").isEqualTo(1);
    assertThat(ranB.get()).isEqualTo(1);
    assertThat(ranA.get()).isZero();
    MessageView paused = lm.admin().get(a.id()).orElseThrow();
    assertThat(paused.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(paused.attempts()).as("a paused type is not even claimed").isZero();

    lm.admin().resume("t.a", "ops", "done");
    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(ranA.get()).isEqualTo(1);
  }

  // ------------------------------------------------------------------ what a claim may take

  @ParameterizedTest(name = "ordered: {0}")
  @ValueSource(booleans = {false, true})
  void aReplicaNeverClaimsATypeItDoesNotHandle(boolean ordered) {
    AtomicInteger ran = new AtomicInteger();
    LocalMessages lm = fx.build(fx.builder().concurrency(4));
    lm.register("t.a", m -> ran.incrementAndGet(), EngineFixture.config().ordered(ordered).build());
    // another replica's type, due before this one's: a claim that took any due row would take it
    // (each message its own aggregate when ordered: every one is its aggregate's head)
    for (int i = 0; i < 5; i++) {
      fx.save(lm, NewMessage.action("t.other", "o" + i).payload("p").aggregateId("o" + i).build());
    }
    for (int i = 0; i < 5; i++) {
      fx.save(lm, NewMessage.action("t.a", "a" + i).payload("p").aggregateId("a" + i).build());
    }
    String versions = "SELECT SUM(version) FROM " + fx.table + " WHERE biz_type = 't.other'";
    long before = Sql.count(ds, versions);
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.count("biz_type = 't.a'") == 0);
    // never claimed, not even claimed and given back (each claim and release moves the version)
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(3))
        .until(
            () ->
                Sql.count(ds, versions) == before
                    && fx.count("biz_type = 't.other' AND attempts = 0 AND lease_owner IS NULL")
                        == 5);
    assertThat(ran.get()).isEqualTo(5);
  }

  @ParameterizedTest(name = "ordered: {0}")
  @ValueSource(booleans = {false, true})
  void aLastAttemptWhoseLeaseRanOutIsNeverRunAgainBeforeTheSweepReachesIt(boolean ordered) {
    AtomicInteger ran = new AtomicInteger();
    LocalMessages lm = fx.build(fx.builder().maintenanceInterval(Duration.ofHours(1)));
    lm.register(
        "t.x",
        m -> ran.incrementAndGet(),
        EngineFixture.config().maxAttempts(1).ordered(ordered).build());
    // a sentinel whose one attempt's lease ran out: the sweep at start makes it DEAD
    SaveResult sentinel =
        fx.save(lm, NewMessage.action("t.x", "s").payload("p").aggregateId("s").build());
    expireLastAttempt(sentinel.id());
    // due in an hour: the first claim leaves it
    SaveResult x = fx.save(lm, dueInAnHour("t.x", "x", "x"));
    lm.start();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> fx.count("id = ? AND status = 2", sentinel.id()) == 1);
    // now its one attempt was used and its lease ran out; the next sweep is an hour away
    expireLastAttempt(x.id());
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(3))
        .until(() -> ran.get() == 0 && fx.count("id = ? AND attempts = 1", x.id()) == 1);
  }

  @Test
  void anAggregateIdNamesAnAggregateOfItsOwnTypeOnly() {
    List<String> ran = new CopyOnWriteArrayList<>();
    LocalMessages lm = fx.build(fx.builder().concurrency(4));
    lm.register("t.a", m -> ran.add("a"), EngineFixture.config().ordered(true).build());
    // the same aggregate id in another type (another replica's), saved first, due in an hour
    fx.save(lm, dueInAnHour("t.b", "b", "x"));
    fx.save(lm, NewMessage.action("t.a", "a").payload("p").aggregateId("x").build());
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> ran.contains("a"));
    assertThat(ran).containsExactly("a");
  }

  private static NewMessage dueInAnHour(String type, String key, String aggregateId) {
    return NewMessage.action(type, key)
        .payload("p")
        .aggregateId(aggregateId)
        .delay(Duration.ofHours(1))
        .build();
  }

  private void expireLastAttempt(long id) {
    Sql.update(
        ds,
        "UPDATE "
            + fx.table
            + " SET attempts = 1, max_attempts = 1, lease_owner = 'gone', next_retry_at ="
            + " created_at WHERE id = ?",
        id);
  }

  @Test
  void aRowLockedByAnotherTransactionDoesNotHoldUpTheOthers() throws Exception {
    List<String> ran = new CopyOnWriteArrayList<>();
    LocalMessages lm = fx.build(fx.builder().concurrency(4));
    lm.register("t.a", m -> ran.add(m.idemKey()), EngineFixture.config().build());
    SaveResult locked = fx.save(lm, action("t.a", "locked"));
    fx.save(lm, action("t.a", "free"));
    try (java.sql.Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (java.sql.PreparedStatement ps =
          c.prepareStatement("SELECT id FROM " + fx.table + " WHERE id = ? FOR UPDATE")) {
        ps.setLong(1, locked.id());
        ps.executeQuery().close();
      }
      lm.start();
      // the claim passes over the locked row instead of waiting for it
      await().atMost(Duration.ofSeconds(5)).until(() -> ran.contains("free"));
      assertThat(ran).as("runs while the row is locked").containsExactly("free");
      c.rollback();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> ran.contains("locked"));
  }

  // ------------------------------------------------------------------ when a message last changed

  @Test
  void anAttemptsOutcomeIsDatedWhenItIsWrittenNotWhenTheMessageWasClaimed() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    LocalMessages lm = fx.build(fx.builder());
    lm.register(
        "t.a",
        m -> {
          inside.countDown();
          assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
          throw new IllegalStateException("retry later");
        },
        EngineFixture.config().backoff(Backoff.fixed(Duration.ofHours(1))).build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    MessageView saved = lm.admin().get(s.id()).orElseThrow();
    java.time.Instant beforeTheClaim = aMomentAfter(saved.updatedAt());
    lm.start();
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    MessageView claimed = lm.admin().get(s.id()).orElseThrow();
    assertThat(claimed.updatedAt()).as("dated by its claim").isAfterOrEqualTo(beforeTheClaim);
    // the database clock moves past the claim before the attempt ends
    java.time.Instant beforeTheOutcome = aMomentAfter(claimed.updatedAt());
    release.countDown();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> lm.admin().get(s.id()).orElseThrow().lastError() != null);
    MessageView retried = lm.admin().get(s.id()).orElseThrow();
    assertThat(retried.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(retried.updatedAt())
        .as("updatedAt: when it last changed (the failed attempt's write-back)")
        .isAfterOrEqualTo(beforeTheOutcome);
  }

  /** The database clock once it is past {@code t}. */
  private java.time.Instant aMomentAfter(java.time.Instant t) {
    await().atMost(Duration.ofSeconds(5)).until(() -> Sql.instantNow(db, ds).isAfter(t));
    return Sql.instantNow(db, ds);
  }

  // ------------------------------------------------------------------ what one claim takes

  @Test
  void aClaimTakesNoMoreThanTheFreeSlotsAndTheLongestDueFirst() throws Exception {
    List<String> ran = new CopyOnWriteArrayList<>();
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    LocalMessages lm = fx.build(fx.builder().concurrency(1));
    lm.register(
        "t.a",
        m -> {
          ran.add(m.idemKey());
          inside.countDown();
          assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
        },
        EngineFixture.config().build());
    // saved first, but due after the other: its due time moved to a moment after the other's
    SaveResult dueSecond = fx.save(lm, action("t.a", "due-second"));
    SaveResult dueFirst = fx.save(lm, action("t.a", "due-first"));
    aMomentAfter(lm.admin().get(dueFirst.id()).orElseThrow().nextRetryAt());
    Sql.update(
        ds,
        "UPDATE " + fx.table + " SET next_retry_at = " + EngineFixture.nowSql(ds) + " WHERE id = ?",
        dueSecond.id());
    lm.start();
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran).as("the longest due runs first").containsExactly("due-first");
    // one free slot: the claim took one message, the other is not leased
    Waits.holds(
        "the second message unclaimed while the only slot is busy",
        Duration.ofMillis(300),
        () -> {
          MessageView waiting = lm.admin().get(dueSecond.id()).orElseThrow();
          return waiting.attempts() == 0 && waiting.leaseOwner() == null;
        });
    release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 2);
    assertThat(ran).containsExactly("due-first", "due-second");
  }

  // ------------------------------------------------------------------ a write-back sent twice

  @Test
  void aWriteBackWhoseCommitAcknowledgementWasLostIsNotAppliedTwice() {
    Recording recording = new Recording();
    // once the handler armed it, the writer's next write takes effect and then reports the
    // connection lost (its commit, or in autocommit mode its statement): the writer cannot know its
    // outcome is in, and sends it again
    AtomicBoolean armed = new AtomicBoolean();
    javax.sql.DataSource flaky =
        Intercepting.dataSource(
            ds,
            (real, m, a) -> {
              if (!armed.get() || !Thread.currentThread().getName().startsWith("lm-writer")) {
                return Intercepting.PROCEED;
              }
              if (m.getName().equals("commit") && armed.compareAndSet(true, false)) {
                real.commit();
                throw lostAfterTheWrite();
              }
              if (m.getName().equals("prepareStatement") && real.getAutoCommit()) {
                java.sql.PreparedStatement ps = (java.sql.PreparedStatement) m.invoke(real, a);
                return java.lang.reflect.Proxy.newProxyInstance(
                    getClass().getClassLoader(),
                    new Class<?>[] {java.sql.PreparedStatement.class},
                    (p, sm, sa) -> {
                      Object result;
                      try {
                        result = sm.invoke(ps, sa);
                      } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                      }
                      if (sm.getName().startsWith("execute") && armed.compareAndSet(true, false)) {
                        throw lostAfterTheWrite();
                      }
                      return result;
                    });
              }
              return Intercepting.PROCEED;
            });
    LocalMessages lm = fx.build(fx.builder(flaky).listener(recording));
    lm.register(
        "t.n",
        m -> {
          armed.set(true);
          // not yet: the attempt the claim counted is given back
          throw new RetryAfter(Duration.ofHours(1), "not yet");
        },
        EngineFixture.config().build());
    SaveResult s = fx.save(lm, action("t.n", "k"));
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> recording.events.contains("cas t.n 1"));
    assertThat(armed.get()).as("the commit failed once after committing").isFalse();
    // applied once: the second send found the version the first one moved and changed nothing
    assertThat(fx.count("id = ? AND attempts = 0 AND last_error = 'not yet'", s.id()))
        .as("the given-back attempt, given back once")
        .isEqualTo(1);
  }

  private static java.sql.SQLException lostAfterTheWrite() {
    return new java.sql.SQLTransientConnectionException(
        "the connection broke after the write took effect", "08006");
  }

  // ------------------------------------------------------------------ closed and crashed engines

  @Test
  void aClosedEngineRefusesRunOnce() {
    LocalMessages lm = fx.build(fx.builder());
    lm.register("t.a", m -> {}, EngineFixture.config().build());
    assertThat(lm.runOnce()).isZero();
    lm.close();
    assertThatThrownBy(lm::runOnce)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("the engine is closed");
    LocalMessages never = fx.build(fx.builder().replicaId("never-ran"));
    never.close();
    assertThatThrownBy(never::runOnce)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("the engine is closed");
  }

  @Test
  void aCrashedEngineWritesNothingAfterwards() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch left = new CountDownLatch(1);
    LocalMessages lm = fx.build(fx.builder().replicaId("crashing"));
    lm.register(
        "t.a",
        m -> {
          inside.countDown();
          try {
            // returns normally even when the crash interrupts it: a success it must not write
            release.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException ignored) {
            // as a handler that swallows the interrupt
          } finally {
            left.countDown();
          }
        },
        EngineFixture.config().build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    lm.start();
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    MessageView claimed = lm.admin().get(s.id()).orElseThrow();
    Engines.halt(lm);
    release.countDown();
    assertThat(left.await(10, TimeUnit.SECONDS)).isTrue();
    Waits.holds(
        "claimed as the halt left it",
        Duration.ofMillis(500),
        () -> {
          MessageView now = lm.admin().get(s.id()).orElseThrow();
          return now.status() == MessageStatus.PENDING
              && now.version() == claimed.version()
              && now.attempts() == 1;
        });
    assertThat(lm.admin().get(s.id()).orElseThrow().leaseOwner())
        .as("the lease stays: the message runs again when it ends")
        .isEqualTo("crashing");
  }

  // ------------------------------------------------------------------ shutdown bound

  @Test
  void closeWaitsForARunningHandlerAtMostTheShutdownTimeout() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    Duration timeout = Duration.ofMillis(600);
    LocalMessages lm = fx.build(fx.builder().replicaId("a").shutdownTimeout(timeout));
    lm.register(
        "t.a",
        m -> {
          inside.countDown();
          never.await(); // leaves when interrupted
        },
        EngineFixture.config().build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    lm.start();
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    long t0 = System.nanoTime();
    lm.close();
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    assertThat(took)
        .as("close waits the shutdown timeout for the handler, then interrupts it")
        .isGreaterThanOrEqualTo(timeout)
        .isLessThan(timeout.plusSeconds(5));
    MessageView t = lm.admin().get(s.id()).orElseThrow();
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.attempts()).as("the attempt the shutdown interrupted is given back").isZero();
    assertThat(t.lastError()).isEqualTo("interrupted by the shutdown of replica a");
  }

  /**
   * A handler that leaves its thread interrupted (it restored an interrupt it caught, or was
   * interrupted by its timeout) must not hand the interrupt on: not to the listener called with its
   * outcome on the same thread, not to the next handler the worker runs, whose first blocking call
   * would fail at once.
   */
  @Test
  void anInterruptLeftByOneHandlerDoesNotReachTheListenerOrTheNextHandler() {
    List<String> seen = new CopyOnWriteArrayList<>();
    EngineListener listener =
        new EngineListener() {
          @Override
          public void delivered(
              String bizType,
              EngineListener.Result result,
              int attempt,
              Duration handlerTime,
              Duration sinceCreated) {
            seen.add("listener " + Thread.currentThread().getName() + " " + Thread.interrupted());
          }
        };
    LocalMessages lm = fx.build(fx.builder().replicaId("one").concurrency(1).listener(listener));
    lm.register(
        "t.a",
        m -> {
          seen.add(
              m.idemKey() + " " + Thread.currentThread().getName() + " " + Thread.interrupted());
          Thread.currentThread().interrupt(); // leaves with the flag set
        },
        EngineFixture.config().build());
    for (int i = 0; i < 3; i++) {
      fx.save(lm, action("t.a", "k" + i));
    }
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
    await().atMost(Duration.ofSeconds(5)).until(() -> seen.size() == 6);
    String worker = seen.get(0).split(" ")[1];
    assertThat(seen)
        .as("one worker thread ran every handler and listener call, never interrupted on entry")
        .allSatisfy(s -> assertThat(s).endsWith(" " + worker + " false"));
  }

  /**
   * A close called on an interrupted thread (a container stopping its threads) does not sit out the
   * shutdown timeout, keeps the caller's interrupt, and still stops the engine; the message whose
   * handler was running is not lost: it runs again when its lease ends.
   */
  @Test
  void anInterruptedCloseDoesNotWaitTheShutdownTimeoutAndKeepsTheInterrupt() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    LocalMessages lm =
        fx.build(fx.builder().replicaId("a").shutdownTimeout(Duration.ofSeconds(30)));
    lm.register(
        "t.a",
        m -> {
          inside.countDown();
          never.await(); // leaves when interrupted
        },
        EngineFixture.config().build());
    SaveResult s = fx.save(lm, action("t.a", "k"));
    lm.start();
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    long t0 = System.nanoTime();
    boolean stillInterrupted;
    Thread.currentThread().interrupt();
    try {
      lm.close();
    } finally {
      stillInterrupted = Thread.interrupted();
    }
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    assertThat(stillInterrupted).as("the caller's interrupt is kept").isTrue();
    assertThat(took).as("no wait for the 30 s shutdown timeout").isLessThan(Duration.ofSeconds(10));
    assertThat(lm.health().running()).isFalse();
    MessageView t = lm.admin().get(s.id()).orElseThrow();
    assertThat(t.status()).as("not lost").isEqualTo(MessageStatus.PENDING);
    // close interrupts the handler and, not waiting, gives it up at once; the handler's thread
    // may still win that race on a loaded machine and leave first, writing its shutdown outcome
    if (t.leaseOwner() == null) {
      assertThat(t.attempts()).as("left first: its attempt given back, due again").isZero();
    } else {
      assertThat(t.leaseOwner()).as("given up: it runs again when the lease ends").isEqualTo("a");
    }
  }

  @Test
  void closeLetsAHandlerThatEndsInsideTheShutdownTimeoutFinishAndWriteItsSuccess()
      throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    LocalMessages lm = fx.build(fx.builder().shutdownTimeout(Duration.ofSeconds(20)));
    AtomicInteger interrupted = new AtomicInteger();
    lm.register(
        "t.a",
        m -> {
          inside.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            interrupted.incrementAndGet();
            throw e;
          }
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(10)).build());
    fx.save(lm, action("t.a", "k"));
    lm.start();
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    Thread closer = new Thread(lm::close, "closer");
    closer.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> !lm.health().running());
    // close is waiting for the handler inside its shutdown timeout, not interrupting it
    Waits.holds(
        "close waiting, handler not interrupted",
        Duration.ofMillis(500),
        () -> interrupted.get() == 0 && closer.isAlive());
    release.countDown();
    closer.join(15_000);
    assertThat(closer.isAlive()).isFalse();
    assertThat(interrupted.get()).isZero();
    assertThat(fx.countAll()).as("the success was written").isZero();
  }

  // ------------------------------------------------------------------ exact counts

  @Test
  void staleWriteBacksAreCountedOnePerMessageAndCurrentOnesNotAtAll() {
    Recording recording = new Recording();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocalMessages lm =
        fx.build(fx.builder().listener(recording).meterRegistry(registry).concurrency(8));
    // each batch of 4: the engine loses two of them to a takeover while the handler runs
    lm.registerBatch(
        "t.ok",
        batch -> {
          takeOver(batch.get(0).id(), batch.get(1).id());
          List<Outcome> out = new ArrayList<>();
          batch.forEach(m -> out.add(Outcome.success()));
          return out;
        },
        EngineFixture.config().batchSize(4).build());
    lm.registerBatch(
        "t.retry",
        batch -> {
          takeOver(batch.get(0).id());
          List<Outcome> out = new ArrayList<>();
          batch.forEach(m -> out.add(Outcome.retry("again")));
          return out;
        },
        EngineFixture.config().batchSize(4).backoff(Backoff.fixed(Duration.ofHours(1))).build());
    fx.saveMany(lm, "t.ok", 4, null);
    fx.saveMany(lm, "t.retry", 4, null);

    assertThat(lm.runOnce()).isEqualTo(8);
    assertThat(fx.count("biz_type = ?", "t.ok")).as("two deleted, two kept").isEqualTo(2);
    assertThat(fx.count("biz_type = ? AND last_error = ?", "t.retry", "again"))
        .as("three retries written, one dropped")
        .isEqualTo(3);
    // one event per write-back batch: the writer may have split the outcomes of one execution
    java.util.Map<String, Integer> conflicts = new java.util.TreeMap<>();
    for (String event : recording.events) {
      String[] f = event.split(" ");
      if (f[0].equals("cas")) {
        conflicts.merge(f[1], Integer.parseInt(f[2]), Integer::sum);
      }
    }
    assertThat(conflicts)
        .containsExactlyInAnyOrderEntriesOf(java.util.Map.of("t.ok", 2, "t.retry", 1));
    assertThat(registry.get("localmessage.cas.conflicts").tag("biz_type", "t.ok").counter().count())
        .isEqualTo(2);
  }

  /** Another replica took these over: the version moved past this replica's claim. */
  private void takeOver(long... ids) {
    for (long id : ids) {
      Sql.update(ds, "UPDATE " + fx.table + " SET version = version + 1 WHERE id = ?", id);
    }
  }

  @Test
  void currentWriteBacksAreNeverCountedAsConflicts() {
    Recording recording = new Recording();
    LocalMessages lm = fx.build(fx.builder().listener(recording).concurrency(4));
    lm.register("t.ok", m -> {}, EngineFixture.config().build());
    lm.register(
        "t.retry",
        m -> {
          throw new IllegalStateException("again");
        },
        EngineFixture.config().backoff(Backoff.fixed(Duration.ofHours(1))).build());
    fx.saveMany(lm, "t.ok", 2, null);
    fx.saveMany(lm, "t.retry", 2, null);
    assertThat(lm.runOnce()).isEqualTo(4);
    assertThat(fx.count("biz_type = ?", "t.ok")).isZero();
    assertThat(fx.count("biz_type = ? AND attempts = 1", "t.retry")).isEqualTo(2);
    assertThat(recording.events).isEmpty();
  }

  @Test
  void oneSweepExpiresSeveralLastAttemptsAndCountsThemTogether() {
    Recording recording = new Recording();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocalMessages lm = fx.build(fx.builder().listener(recording).meterRegistry(registry));
    AtomicInteger ran = new AtomicInteger();
    lm.register("t.a", m -> ran.incrementAndGet(), EngineFixture.config().maxAttempts(1).build());
    fx.saveMany(lm, "t.a", 3, null);
    // two last attempts whose worker crashed: claimed once, lease over; the third is fresh
    Sql.update(
        ds,
        "UPDATE "
            + fx.table
            + " SET attempts = 1, max_attempts = 1, lease_owner = 'gone', version = 1,"
            + " next_retry_at = created_at WHERE idem_key IN ('k-0', 'k-1')");

    assertThat(lm.runOnce()).as("only the fresh one runs").isEqualTo(1);
    assertThat(ran.get()).isEqualTo(1);
    assertThat(
            fx.count(
                "status = 2 AND last_error LIKE ?",
                "attempts exhausted: the last delivery's lease ended without an outcome%"))
        .isEqualTo(2);
    assertThat(recording.events).containsExactly("expired 2");
    assertThat(registry.get("localmessage.expired.last.attempt").counter().count()).isEqualTo(2);

    assertThat(lm.runOnce()).isZero();
    assertThat(recording.events).as("nothing left to sweep, nothing reported").hasSize(1);
  }

  // ------------------------------------------------------------------ after-commit dispatch

  @Test
  void inTransactionStartsTheMessageWithoutThePoller() {
    StatementLog log = new StatementLog(ds);
    fx.build(fx.builder()).close(); // the tables
    LocalMessages lm =
        fx.build(
            fx.builder(log.dataSource())
                .autoCreateSchema(false)
                .replicaId("dispatch")
                .pollInterval(Duration.ofMinutes(10)));
    List<String> ran = new CopyOnWriteArrayList<>();
    lm.register("t.a", m -> ran.add(m.idemKey()), EngineFixture.config().build());
    // the poller's first round (at start) claims the probe; when the probe's slot comes back it
    // claims once more (a claim that found messages may have passed over locked rows), finds
    // nothing, and the next round is a tenth of the poll interval (one minute) away. (The
    // poller's health is no sign: it reports success at start, before its first round, and a
    // save racing those rounds would be claimed by them.)
    fx.save(lm, action("t.a", "probe"));
    lm.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> ran.contains("probe"));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> log.count("lm-poller-dispatch", sql -> sql.contains("SKIP LOCKED")) >= 2);
    ran.clear();
    fx.save(lm, action("t.a", "plain"));
    Waits.holds(
        "not run", Duration.ofMillis(300), ran::isEmpty); // a plain commit waits for the poller
    lm.inTransaction(c -> lm.save(c, action("t.a", "k")));
    await().atMost(Duration.ofSeconds(5)).until(() -> ran.contains("k"));
    assertThat(ran)
        .as("only the message committed by inTransaction was dispatched")
        .containsExactly("k");
  }

  /**
   * A retry this replica wrote is claimed when it is due, also when there are fewer free slots than
   * registered types: the round the due time starts offers the retry's type first. The fair
   * rotation alone offered that round to types without work (one slot, nine types) and the retry
   * then waited for the next poll, here 10 minutes away.
   */
  @Test
  void aRetryIsClaimedWhenDueWithFewerFreeSlotsThanTypes() {
    LocalMessages lm =
        fx.build(
            fx.builder()
                .concurrency(1)
                .pollInterval(Duration.ofMinutes(10))
                .wakeUps(false)
                .replicaId("one-slot"));
    for (int i = 0; i < 8; i++) {
      lm.register("t.idle" + i, m -> {}, EngineFixture.config().build());
    }
    List<Integer> attempts = new CopyOnWriteArrayList<>();
    lm.register(
        "t.retry",
        m -> {
          attempts.add(m.attempt());
          if (m.attempt() < 4) {
            throw new IllegalStateException("not yet");
          }
        },
        EngineFixture.config()
            .maxAttempts(5)
            .backoff(Backoff.fixed(Duration.ofMillis(200)))
            .build());
    fx.save(lm, NewMessage.action("t.retry", "r").build());
    lm.start();
    await().atMost(Duration.ofSeconds(15)).until(() -> fx.count("biz_type = 't.retry'") == 0);
    assertThat(attempts).containsExactly(1, 2, 3, 4);
  }
}
