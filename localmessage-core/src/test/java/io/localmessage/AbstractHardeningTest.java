package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.localmessage.admin.MessageView;
import io.localmessage.spi.EngineListener;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import io.localmessage.testing.Waits;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOError;
import java.io.IOException;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The promises that hold under timeouts, short outages, poison rows and shutdown, on every
 * database: a ticket never runs twice at once while a delivery of it may still be inside its
 * handler, nothing gets stuck, and a finished outcome is recorded. Each test is named after the
 * failure it pins down and failed on the engine before the fix.
 */
public abstract class AbstractHardeningTest extends DatabaseTest {

  /** Records every execution of every ticket: overlaps, counts and attempts. */
  static final class Executions {
    record Run(long id, String replica, int attempt, long startNanos, long endNanos) {}

    final List<Run> runs = new CopyOnWriteArrayList<>();
    final ConcurrentHashMap<Long, AtomicInteger> active = new ConcurrentHashMap<>();
    final AtomicInteger maxActive = new AtomicInteger();

    long enter(Message m) {
      int now = active.computeIfAbsent(m.id(), k -> new AtomicInteger()).incrementAndGet();
      maxActive.accumulateAndGet(now, Math::max);
      return System.nanoTime();
    }

    void leave(Message m, String replica, long start) {
      active.get(m.id()).decrementAndGet();
      runs.add(new Run(m.id(), replica, m.attempt(), start, System.nanoTime()));
    }

    int count() {
      return runs.size();
    }
  }

  /** Busy for {@code d} whatever happens: blocking I/O without a timeout ignores interrupts. */
  static void workIgnoringInterrupts(Duration d) {
    long end = System.nanoTime() + d.toNanos();
    boolean interrupted = false;
    while (System.nanoTime() < end) {
      try {
        TimeUnit.MILLISECONDS.sleep(5);
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private static NewMessage action(String type, String key) {
    return NewMessage.action(type, key).payload("{}").build();
  }

  private String lastError(long id) {
    return Sql.string(ds, "SELECT last_error FROM " + fx.table + " WHERE id = ?", id);
  }

  // ------------------------------------------------------------------ A. lease ownership

  @Test
  void timedOutHandlerThatIgnoresInterruptsIsNeverRunAgainWhileItStillRuns() {
    Executions ex = new Executions();
    LocalMessages lm = fx.build(fx.builder().replicaId("a"));
    lm.register(
        "t.slow",
        m -> {
          long start = ex.enter(m);
          try {
            workIgnoringInterrupts(Duration.ofMillis(900));
          } finally {
            ex.leave(m, "a", start);
          }
        },
        EngineFixture.config()
            .handlerTimeout(Duration.ofMillis(200))
            .maxAttempts(3)
            .backoff(Backoff.fixed(Duration.ofMillis(20)))
            .build());
    lm.start();
    SaveResult s = fx.save(lm, action("t.slow", "k"));

    await().atMost(Duration.ofSeconds(20)).until(() -> fx.count("status = 2") == 1);
    assertThat(ex.maxActive.get()).as("executions of one ticket at the same time").isEqualTo(1);
    assertThat(ex.count()).as("three attempts, one after the other").isEqualTo(3);
    assertThat(lastError(s.id())).contains("timed out");
  }

  @Test
  void aHandlerLongerThanTheLeaseKeepsItsTicketThroughRenewals() {
    Executions ex = new Executions();
    HandlerConfig config =
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(10)).maxAttempts(5).build();
    List<LocalMessages> engines = new ArrayList<>();
    for (String replica : List.of("a", "b")) {
      LocalMessages lm = fx.build(fx.builder().replicaId(replica).lease(Duration.ofMillis(1200)));
      lm.register(
          "t.long",
          m -> {
            long start = ex.enter(m);
            try {
              workIgnoringInterrupts(Duration.ofMillis(3500));
            } finally {
              ex.leave(m, replica, start);
            }
          },
          config);
      engines.add(lm);
    }
    engines.forEach(LocalMessages::start);
    fx.save(engines.get(0), action("t.long", "k"));

    await().atMost(Duration.ofSeconds(20)).until(() -> fx.countAll() == 0);
    assertThat(ex.count()).as("one delivery: no replica took over a renewed lease").isEqualTo(1);
    assertThat(ex.maxActive.get()).isEqualTo(1);
  }

  @Test
  void closeKeepsTheLeaseOfAHandlerThatIgnoresTheInterrupt() {
    Executions ex = new Executions();
    CountDownLatch started = new CountDownLatch(1);
    HandlerConfig config = EngineFixture.config().maxAttempts(1).build();
    LocalMessages a = fx.build(fx.builder().replicaId("a").shutdownTimeout(Duration.ofMillis(100)));
    a.register(
        "t.x",
        m -> {
          long start = ex.enter(m);
          started.countDown();
          try {
            workIgnoringInterrupts(Duration.ofMillis(2500));
          } finally {
            ex.leave(m, "a", start);
          }
        },
        config);
    a.start();
    fx.save(a, action("t.x", "k"));
    await().atMost(Duration.ofSeconds(10)).until(() -> started.getCount() == 0);
    a.close();
    // still leased to a, with the attempt given back and the version moved past a's outcome
    assertThat(fx.count("attempts = 0 AND lease_owner = 'a' AND status = 0")).isEqualTo(1);
    assertThat(
            Sql.count(
                ds,
                "SELECT COUNT(*) FROM "
                    + fx.table
                    + " WHERE next_retry_at > "
                    + EngineFixture.nowSql(ds)))
        .as("the lease end was not moved earlier")
        .isEqualTo(1);

    LocalMessages b = fx.build(fx.builder().replicaId("b"));
    List<Integer> attemptsSeenByB = new CopyOnWriteArrayList<>();
    b.register(
        "t.x",
        m -> {
          long start = ex.enter(m);
          attemptsSeenByB.add(m.attempt());
          ex.leave(m, "b", start);
        },
        config);
    b.start();
    await().atMost(Duration.ofSeconds(20)).until(() -> fx.countAll() == 0);
    assertThat(ex.maxActive.get()).as("b never ran it while a's handler was inside").isEqualTo(1);
    Executions.Run first = ex.runs.get(0);
    Executions.Run second = ex.runs.get(1);
    assertThat(second.startNanos()).isGreaterThan(first.endNanos());
    assertThat(attemptsSeenByB)
        .as("the attempt a's shutdown interrupted was given back")
        .containsExactly(1);
  }

  @Test
  void closeHandsAnInterruptedExecutionToAnotherReplicaAtOnceWithItsAttemptBack() {
    CountDownLatch started = new CountDownLatch(1);
    HandlerConfig config = EngineFixture.config().maxAttempts(1).build();
    LocalMessages a = fx.build(fx.builder().replicaId("a").shutdownTimeout(Duration.ofMillis(100)));
    a.register(
        "t.x",
        m -> {
          started.countDown();
          TimeUnit.SECONDS.sleep(30); // answers the interrupt
        },
        config);
    a.start();
    SaveResult s = fx.save(a, action("t.x", "k"));
    await().atMost(Duration.ofSeconds(10)).until(() -> started.getCount() == 0);
    a.close();

    LocalMessages b = fx.build(fx.builder().replicaId("b"));
    AtomicInteger attempt = new AtomicInteger();
    b.register("t.x", m -> attempt.set(m.attempt()), config);
    b.start();
    // well before the 5 s lease of a's claim would have ended
    await().atMost(Duration.ofSeconds(3)).until(() -> fx.countAll() == 0);
    assertThat(attempt.get())
        .as("a last attempt interrupted by a deploy is not burned")
        .isEqualTo(1);
    assertThat(fx.count("id = ?", s.id())).isZero();
  }

  // ------------------------------------------------------------------ B. bad moments

  /** A pool in front of the test database that refuses connections while {@code down} is set. */
  static final class Outage implements DataSource {
    final DataSource target;
    final AtomicBoolean down = new AtomicBoolean();

    /** Down for the write-behind thread only: claims still run, write-backs meet the outage. */
    final AtomicBoolean downForTheWriter = new AtomicBoolean();

    /** Connections the write-behind thread asked for while the database was down. */
    final AtomicInteger writerTries = new AtomicInteger();

    Outage(DataSource target) {
      this.target = target;
    }

    @Override
    public Connection getConnection() throws SQLException {
      boolean writer = Thread.currentThread().getName().startsWith("lm-writer-");
      if (down.get() || (writer && downForTheWriter.get())) {
        if (Thread.currentThread().getName().startsWith("lm-writer-")) {
          writerTries.incrementAndGet();
        }
        throw new SQLTransientConnectionException("database unreachable (test outage)", "08001");
      }
      Connection c = target.getConnection();
      // an outage reaches the connections already open too (the renewer keeps one)
      return (Connection)
          java.lang.reflect.Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                String name = method.getName();
                if (down.get()
                    && !name.equals("close")
                    && !name.equals("isClosed")
                    && !name.equals("abort")) {
                  throw new SQLTransientConnectionException(
                      "database unreachable (test outage)", "08006");
                }
                try {
                  return method.invoke(c, args);
                } catch (java.lang.reflect.InvocationTargetException e) {
                  throw e.getCause();
                }
              });
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
      return target.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
      target.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      target.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return target.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      return target.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
      return target.isWrapperFor(iface);
    }
  }

  private static EngineHealth.Loop loop(LocalMessages lm, String name) {
    return lm.health().loops().stream()
        .filter(l -> l.name().equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void anOutcomeSurvivesAnOutageShorterThanItsLease() {
    Outage outage = new Outage(ds);
    fx.build(fx.builder().autoCreateSchema(true)).close(); // the tables, before the outage
    LocalMessages lm =
        fx.build(
            fx.builder(outage)
                .lease(Duration.ofSeconds(8))
                .autoCreateSchema(false)
                .loopStuckAfter(Duration.ofMillis(500)));
    AtomicInteger runs = new AtomicInteger();
    lm.register(
        "t.once",
        m -> {
          runs.incrementAndGet();
          outage.down.set(true); // the database goes away while the handler finishes
        },
        EngineFixture.config().maxAttempts(1).build());
    lm.start();
    fx.save(lm, action("t.once", "k"));
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
    // the writer's health shows it retrying against the outage: stuck, with the outage's error
    await()
        .atMost(Duration.ofSeconds(3))
        .until(
            () -> {
              EngineHealth.Loop w = loop(lm, "writer");
              return w.stuck() && String.valueOf(w.lastError()).contains("test outage");
            });
    // down for about 4 s in all: longer than the old writer's 2.6 s of retries, shorter than
    // lease - margin
    Duration window = Waits.window(Duration.ofSeconds(3));
    outage.down.set(false);
    // the retries back off, 50 ms doubling to 2 s (tries at 0, 0.05, 0.15, 0.35, 0.75, 1.55,
    // 3.15, 5.15 s ...): about 7 in an outage of 3.5 to 6 s, neither hammering the database nor
    // waiting out the lease; a window that a loaded machine stretched allows a try per 2 s more
    assertThat(outage.writerTries.get())
        .as("write-back tries during the outage")
        .isBetween(5, 9 + (int) (window.minusSeconds(3).toMillis() / 2000));

    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
    assertThat(runs.get()).as("the success written late, not run again").isEqualTo(1);
    await().atMost(Duration.ofSeconds(3)).until(() -> !loop(lm, "writer").stuck());
    assertThat(loop(lm, "writer").lastSuccess()).isNotNull();
  }

  /**
   * A close while the database is gone does not hang on the writer for the rest of the lease: it
   * waits the write-back margin plus 5 s, then gives up on what is left, and a writer it gave up on
   * writes nothing afterwards (the pool is the application's to close). The outcome is not lost:
   * its message stays leased and runs again when the lease ends.
   */
  @Test
  void closeDuringAnOutageGivesUpOnTheWriterAfterTheMarginAndWritesNothingLater() {
    Outage outage = new Outage(ds);
    fx.build(fx.builder().autoCreateSchema(true)).close(); // the tables, before the outage
    Duration margin = Duration.ofMillis(50);
    LocalMessages lm =
        fx.build(
            fx.builder(outage)
                .replicaId("closing")
                .lease(Duration.ofSeconds(60))
                .writeBackMargin(margin)
                .autoCreateSchema(false)
                .loopStuckAfter(Duration.ofMillis(500)));
    AtomicInteger runs = new AtomicInteger();
    lm.register(
        "t.once",
        m -> {
          runs.incrementAndGet();
          outage.down.set(true);
        },
        EngineFixture.config().maxAttempts(3).build());
    lm.start();
    SaveResult s = fx.save(lm, action("t.once", "k"));
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
    await()
        .atMost(Duration.ofSeconds(3))
        .until(() -> String.valueOf(loop(lm, "writer").lastError()).contains("test outage"));
    long t0 = System.nanoTime();
    lm.close();
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    assertThat(took)
        .as("close waits the margin plus 5 s for the writer, not the 60 s lease")
        .isGreaterThanOrEqualTo(margin.plusSeconds(5))
        .isLessThan(margin.plusSeconds(9));
    outage.down.set(false);
    // a writer that kept retrying would write the success within its 2 s retry step
    Waits.holds("the message left as it was", Duration.ofSeconds(3), () -> fx.countAll() == 1);
    MessageView left = fx.build(fx.builder()).admin().get(s.id()).orElseThrow();
    assertThat(left.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(left.leaseOwner())
        .as("still leased: it runs again when the lease ends")
        .isEqualTo("closing");
    assertThat(left.attempts()).isEqualTo(1);
  }

  @Test
  void oneRowTheDatabaseRefusesDoesNotSinkItsBatch() {
    LocalMessages lm = fx.build(fx.builder());
    lm.registerBatch(
        "t.batch",
        batch -> {
          List<Outcome> out = new ArrayList<>();
          for (Message m : batch) {
            out.add(
                m.idemKey().equals("bad")
                    // a date no database can store: the one row it refuses
                    ? Outcome.retryAfter(Duration.ofDays(365L * 400_000), "far future")
                    : Outcome.retry("busy, try later"));
          }
          return out;
        },
        EngineFixture.config().batchSize(10).maxAttempts(50).build());
    fx.save(lm, action("t.batch", "bad"));
    fx.save(lm, action("t.batch", "good-1"));
    fx.save(lm, action("t.batch", "good-2"));
    lm.start();
    // the good rows got their retry outcome written (not left leased for the whole lease)
    await()
        .atMost(Duration.ofSeconds(4))
        .until(() -> fx.count("idem_key LIKE 'good-%' AND last_error = 'busy, try later'") == 2);
  }

  /**
   * An engine whose write-backs go through a data source that refuses what {@code refuse} picks.
   */
  private LocalMessages refusingEngine(
      java.util.function.Predicate<Object> refuse, EngineFixture.Counting counting) {
    fx.build(fx.builder()).close(); // the tables, through the plain data source
    LocalMessages lm =
        fx.build(
            fx.builder(io.localmessage.testing.Refusing.dataSource(ds, refuse))
                .autoCreateSchema(false)
                .listener(counting));
    lm.registerBatch(
        "t.batch",
        batch -> {
          List<Outcome> out = new ArrayList<>();
          for (Message m : batch) {
            out.add(
                Outcome.retry(m.idemKey().equals("bad") ? "poison in the reply" : "busy, later"));
          }
          return out;
        },
        EngineFixture.config().batchSize(10).backoff(Backoff.fixed(Duration.ofHours(1))).build());
    return lm;
  }

  private static boolean poisoned(Object v) {
    return v instanceof String t && t.contains("poison");
  }

  @Test
  void aRowRefusedForItsErrorTextIsWrittenWithoutItAndItsBatchNeighboursAsTheyAre() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = refusingEngine(AbstractHardeningTest::poisoned, counting);
    fx.save(lm, action("t.batch", "good-1"));
    fx.save(lm, action("t.batch", "bad"));
    fx.save(lm, action("t.batch", "good-2"));

    long before = System.nanoTime();
    assertThat(lm.runOnce()).isEqualTo(3);
    assertThat(Duration.ofNanos(System.nanoTime() - before))
        .as(
            "the outcome written without its text counts as written: runOnce does not wait out"
                + " the 5 s lease for it")
        .isLessThan(Duration.ofSeconds(4));
    assertThat(fx.count("idem_key LIKE 'good-%' AND attempts = 1 AND last_error = 'busy, later'"))
        .as("the neighbours of the refused row, written as they are")
        .isEqualTo(2);
    assertThat(
            fx.count(
                "idem_key = 'bad' AND status = 0 AND attempts = 1 AND last_error = ?",
                "(the error text of this outcome could not be stored)"))
        .as("the refused row: its outcome kept, its error text replaced")
        .isEqualTo(1);
    assertThat(fx.count("next_retry_at > " + EngineFixture.nowSql(ds) + " AND status = 0"))
        .as("all three wait for their backoff")
        .isEqualTo(3);
    assertThat(counting.writeBackDropped.get()).isZero();
    assertThat(counting.casConflicts.get()).isZero();
  }

  @Test
  void aRowRefusedEvenWithoutItsErrorTextIsDroppedAndCountedAndItsNeighboursWritten() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    // the replacement text is refused as well: only the bad row is ever written with it
    LocalMessages lm =
        refusingEngine(
            v ->
                poisoned(v)
                    || (v instanceof String t && t.startsWith("(the error text of this outcome")),
            counting);
    fx.save(lm, action("t.batch", "good-1"));
    SaveResult bad = fx.save(lm, action("t.batch", "bad"));
    fx.save(lm, action("t.batch", "good-2"));
    long before = System.nanoTime();
    assertThat(lm.runOnce()).isEqualTo(3);
    assertThat(Duration.ofNanos(System.nanoTime() - before))
        .as("a dropped outcome does not hold runOnce up until the lease ends")
        .isLessThan(Duration.ofSeconds(4));
    assertThat(fx.count("idem_key LIKE 'good-%' AND last_error = 'busy, later'")).isEqualTo(2);
    assertThat(counting.writeBackDropped.get()).isEqualTo(1);
    assertThat(fx.count("id = ? AND attempts = 1 AND last_error IS NULL", bad.id()))
        .as("the refused row stays as claimed: it runs again when its lease ends")
        .isEqualTo(1);
  }

  @Test
  void anErrorTextWithNulIsStoredCleaned() {
    LocalMessages lm = fx.build(fx.builder());
    lm.register(
        "t.nul",
        m -> {
          throw new IllegalStateException("remote said \u0000\u0001garbage\uD800");
        },
        EngineFixture.config().maxAttempts(50).backoff(Backoff.fixed(Duration.ofHours(1))).build());
    lm.start();
    SaveResult s = fx.save(lm, action("t.nul", "k"));
    await()
        .atMost(Duration.ofSeconds(4))
        .until(() -> lastError(s.id()) != null && lastError(s.id()).contains("garbage"));
    assertThat(lastError(s.id())).doesNotContain("\u0000").contains("\u0001garbage\uFFFD");
  }

  @Test
  void aRowThatCannotBeDecodedGoesDeadAndStallsNothing() {
    LocalMessages lm = fx.build(fx.builder().concurrency(4));
    AtomicInteger ran = new AtomicInteger();
    lm.register("t.p", m -> ran.incrementAndGet(), EngineFixture.config().build());
    for (int i = 0; i < 4; i++) {
      fx.save(lm, action("t.p", "poison-" + i));
    }
    // written by another producer or a hand fix: not the JSON object the library writes
    Sql.update(ds, "UPDATE " + fx.table + " SET headers = 'not json'");
    for (int i = 0; i < 20; i++) {
      fx.save(lm, action("t.p", "valid-" + i));
    }
    lm.start();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> ran.get() == 20 && fx.count("status = 0") == 0);
    assertThat(fx.count("status = 2 AND last_error LIKE 'cannot decode%'")).isEqualTo(4);

    // every slot came back: four handlers can run at the same time
    CountDownLatch four = new CountDownLatch(4);
    CountDownLatch release = new CountDownLatch(1);
    LocalMessages again = fx.build(fx.builder().concurrency(4));
    again.register(
        "t.q",
        m -> {
          four.countDown();
          release.await(10, TimeUnit.SECONDS);
        },
        EngineFixture.config().build());
    lm.close();
    again.start();
    for (int i = 0; i < 4; i++) {
      fx.save(again, action("t.q", "q-" + i));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> four.getCount() == 0);
    release.countDown();
  }

  @Test
  void anUndecodableRowStillGoesDeadAfterAWriteBackOutageShorterThanTheLease() {
    Outage outage = new Outage(ds);
    fx.build(fx.builder()).close(); // the tables, before the outage
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm =
        fx.build(
            fx.builder(outage)
                .lease(Duration.ofSeconds(30))
                .autoCreateSchema(false)
                .listener(counting));
    lm.register("t.p", m -> {}, EngineFixture.config().build());
    SaveResult s = fx.save(lm, action("t.p", "poison"));
    Sql.update(ds, "UPDATE " + fx.table + " SET headers = 'not json'");
    outage.downForTheWriter.set(true);
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> outage.writerTries.get() >= 2);
    outage.downForTheWriter.set(false);
    // written within the lease, not dropped and left leased for 30 s
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> fx.count("id = ? AND status = 2", s.id()) == 1);
    assertThat(lastError(s.id())).startsWith("cannot decode the message");
    assertThat(counting.writeBackDropped.get()).isZero();
  }

  @Test
  void aFinishedRunKeepsItsLeaseUntilItsOutcomeIsWritten() {
    Outage outage = new Outage(ds);
    fx.build(fx.builder()).close(); // the tables, before the outage
    // 3 s: a renewal (every third of it) must miss for 2 s before the lease runs out, which a
    // loaded machine (the test command's two builds beside a busy core) did to a 1.2 s lease
    Duration lease = Duration.ofSeconds(3);
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages a =
        fx.build(
            fx.builder(outage)
                .replicaId("a")
                .lease(lease)
                .autoCreateSchema(false)
                .listener(counting));
    LocalMessages b =
        fx.build(fx.builder().replicaId("b").lease(lease).pollInterval(Duration.ofMillis(50)));
    List<String> runs = new CopyOnWriteArrayList<>();
    a.register("t.w", m -> runs.add("a"), EngineFixture.config().build());
    b.register("t.w", m -> runs.add("b"), EngineFixture.config().build());
    SaveResult s = fx.save(a, action("t.w", "k"));
    // a backed-up writer: a's outcome waits in its queue while a's other loops work
    outage.downForTheWriter.set(true);
    a.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> runs.size() == 1);
    b.start();
    // three leases long, b polling every 50 ms: a keeps renewing the lease of the finished run, so
    // the message is never due for b
    Waits.holds("one run", lease.multipliedBy(3), () -> runs.size() == 1);
    outage.downForTheWriter.set(false);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.count("id = ?", s.id()) == 0);
    assertThat(runs).as("the success written late, not run again").containsExactly("a");
    assertThat(counting.writeBackDropped.get()).isZero();
  }

  /**
   * The renewal of a finished run's lease is bounded like a running one's: an outcome its writer
   * cannot write (here the writer is cut off for good while renewals pass) is no longer renewed
   * once {@code maxExecutionTime} has passed since the handler started, so the message runs again.
   */
  @Test
  void anOutcomeThatCannotBeWrittenStopsHoldingItsLeaseAtTheCap() {
    Outage outage = new Outage(ds);
    fx.build(fx.builder()).close(); // the tables, before the outage
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm =
        fx.build(
            fx.builder(outage)
                .lease(Duration.ofMillis(1200))
                .maxExecutionTime(Duration.ofSeconds(2))
                .autoCreateSchema(false)
                .listener(counting));
    AtomicInteger runs = new AtomicInteger();
    lm.register(
        "t.cap",
        m -> runs.incrementAndGet(),
        EngineFixture.config().handlerTimeout(Duration.ofMillis(500)).build());
    fx.save(lm, action("t.cap", "k"));
    outage.downForTheWriter.set(true); // while renewals pass
    lm.start();
    // renewed until 2 s after the handler started, then the lease runs out and the outcome is
    // dropped (before: renewed for as long as the writer could not write, here for ever)
    await().atMost(Duration.ofSeconds(20)).until(() -> counting.writeBackDropped.get() == 1);
    outage.downForTheWriter.set(false);
    await().atMost(Duration.ofSeconds(20)).until(() -> fx.countAll() == 0);
    assertThat(runs.get()).as("run again once its lease ran out").isEqualTo(2);
  }

  /**
   * Handlers that do database work on the engine's own pool take every connection of it: the lease
   * renewer still renews, on the connection it keeps while executions are in flight, and no other
   * replica runs the messages beside the handlers still inside them.
   */
  @Test
  void handlersTakingEveryConnectionOfThePoolDoNotStarveTheLeaseRenewer() {
    DataSource two = db.dataSource(2); // one per handler: nothing left for the engine's loops
    fx.build(fx.builder()).close(); // the tables
    Duration lease = Duration.ofSeconds(3);
    List<String> runs = new CopyOnWriteArrayList<>();
    LocalMessages a =
        fx.build(
            fx.builder(two)
                .replicaId("a")
                .autoCreateSchema(false)
                .wakeUps(false) // no listening connection: the two handlers take the whole pool
                .concurrency(2)
                .lease(lease));
    a.register(
        "t.pool",
        m -> {
          runs.add("a:" + m.idemKey());
          try (Connection c = two.getConnection();
              PreparedStatement ps = c.prepareStatement("SELECT 1")) {
            ps.execute();
            Thread.sleep(6_000); // the handler's own work, twice the lease, holding its connection
          }
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(20)).build());
    LocalMessages b =
        fx.build(fx.builder().replicaId("b").lease(lease).pollInterval(Duration.ofMillis(50)));
    b.register("t.pool", m -> runs.add("b:" + m.idemKey()), EngineFixture.config().build());
    fx.save(a, action("t.pool", "k1"));
    fx.save(a, action("t.pool", "k2"));
    a.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> runs.size() == 2);
    b.start();
    Waits.holds(
        "no run on replica b while a's handlers are inside",
        Duration.ofSeconds(8),
        () -> runs.stream().noneMatch(r -> r.startsWith("b:")));
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.countAll() == 0);
    assertThat(runs).containsExactlyInAnyOrder("a:k1", "a:k2");
  }

  /**
   * A renewal that fails is said and counted before the lease is lost: the renewer's kept
   * connection is killed while a handler runs (a failover, a cut network); the next renewal fails
   * at a third of the lease, is logged with the lease left and counted ({@code
   * localmessage.lease.renewal.failures}), and the one after it, on a fresh connection, renews
   * again, so the message is run once.
   */
  @Test
  void aRenewalThatFailsIsCountedBeforeTheLeaseIsLostAndTheNextOneRenews() throws Exception {
    assumeTrue(
        db.kind() != TestDatabase.Kind.H2,
        "H2 runs in this JVM: cutting its sessions closes the in-memory database");
    EngineFixture.Counting counting = new EngineFixture.Counting();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocalMessages lm =
        fx.build(
            fx.builder()
                .lease(Duration.ofSeconds(3))
                .wakeUps(false)
                .listener(counting)
                .meterRegistry(registry));
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    lm.register(
        "t.renewfail",
        m -> {
          runs.incrementAndGet();
          if (!release.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never released the handler");
          }
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(40)).build());
    fx.save(lm, action("t.renewfail", "k"));
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> counting.renewed.get() >= 1);
    assertThat(db.killSessions()).as("sessions ended").isPositive();
    await().atMost(Duration.ofSeconds(10)).until(() -> counting.renewalFailures.get() >= 1);
    int renewedAfterFailure = counting.renewed.get();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> counting.renewed.get() > renewedAfterFailure);
    assertThat(
            registry
                .get("localmessage.lease.renewal.failures")
                .tag("biz_type", "t.renewfail")
                .counter()
                .count())
        .isEqualTo(counting.renewalFailures.get());
    release.countDown();
    await().atMost(Duration.ofSeconds(20)).until(() -> fx.countAll() == 0);
    assertThat(runs.get()).as("runs of the message").isEqualTo(1);
  }

  @Test
  void anErrorThrownByAHandlerIsARetryWithItsReason() {
    LocalMessages lm = fx.build(fx.builder());
    AtomicInteger calls = new AtomicInteger();
    lm.register(
        "t.err",
        m -> {
          if (calls.incrementAndGet() == 1) {
            throw new IOError(new IOException("disk gone"));
          }
        },
        EngineFixture.config().maxAttempts(5).build());
    lm.start();
    SaveResult s = fx.save(lm, action("t.err", "k"));
    // the retry comes after the 10 ms backoff, not after the 5 s lease
    await().atMost(Duration.ofSeconds(3)).until(() -> fx.countAll() == 0);
    assertThat(calls.get()).isEqualTo(2);
    assertThat(s.id()).isPositive();
  }

  // ------------------------------------------------------------------ C. policy and maintenance

  @Test
  void aProducerThatDoesNotHandleATypeLeavesItsPolicyToTheHandlingReplica() {
    LocalMessages producer = fx.build(fx.builder().replicaId("producer"));
    SaveResult s = fx.save(producer, action("t.remote", "k"));
    LocalMessages worker = fx.build(fx.builder().replicaId("worker"));
    AtomicInteger calls = new AtomicInteger();
    worker.register(
        "t.remote",
        m -> {
          calls.incrementAndGet();
          throw new IllegalStateException("always failing");
        },
        EngineFixture.config().maxAttempts(2).build());
    worker.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.count("status = 2") == 1);
    assertThat(calls.get())
        .as("the worker's maxAttempts, not the engine default of 10")
        .isEqualTo(2);
    assertThat(lastError(s.id())).startsWith("attempts exhausted (2/2)");
  }

  @Test
  void aProducerWithAnExplicitDefaultStoresIt() {
    LocalMessages producer = fx.build(fx.builder().defaultMaxAttempts(4));
    SaveResult s = fx.save(producer, action("t.remote", "k"));
    assertThat(Sql.count(ds, "SELECT max_attempts FROM " + fx.table + " WHERE id = ?", s.id()))
        .isEqualTo(4);
  }

  @Test
  void aRetentionPurgeThatWaitsOnALockDoesNotStopClaiming() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    lm.register(
        "t.kept", m -> {}, EngineFixture.config().retainSucceeded(Duration.ofMillis(1)).build());
    AtomicInteger ran = new AtomicInteger();
    lm.register("t.fresh", m -> ran.incrementAndGet(), EngineFixture.config().build());
    SaveResult kept = fx.save(lm, action("t.kept", "k"));
    lm.runOnce();
    assertThat(fx.count("id = ? AND status = 1", kept.id())).isEqualTo(1);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      // an application transaction holds the retained row: the purge's delete must wait for it
      try (PreparedStatement ps =
          c.prepareStatement("SELECT id FROM " + fx.table + " WHERE id = ? FOR UPDATE")) {
        ps.setLong(1, kept.id());
        ps.executeQuery().close();
      }
      lm.start();
      fx.save(lm, action("t.fresh", "f"));
      await().atMost(Duration.ofSeconds(3)).until(() -> ran.get() == 1);
      c.rollback();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.count("id = ?", kept.id()) == 0);
  }

  // ------------------------------------------------------------------ renewal, fencing, health

  @Test
  void renewalsAreCountedAndATakenOverExecutionIsFencedAndInterrupted() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm =
        fx.build(fx.builder().replicaId("a").lease(Duration.ofMillis(1200)).listener(counting));
    CountDownLatch started = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    lm.register(
        "t.f",
        m -> {
          started.countDown();
          try {
            TimeUnit.SECONDS.sleep(20);
          } catch (InterruptedException e) {
            interrupted.set(true);
          }
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(30)).build());
    lm.start();
    SaveResult s = fx.save(lm, action("t.f", "k"));
    await().atMost(Duration.ofSeconds(5)).until(() -> started.getCount() == 0);
    await().atMost(Duration.ofSeconds(5)).until(() -> counting.renewed.get() >= 2);

    // another replica took the ticket over (as if this one had been frozen past its lease)
    Sql.update(
        ds,
        "UPDATE "
            + fx.table
            + " SET version = version + 1, lease_owner = 'other', attempts = attempts + 1 WHERE id = ?",
        s.id());
    await().atMost(Duration.ofSeconds(5)).until(() -> counting.fenced.get() == 1);
    await().atMost(Duration.ofSeconds(5)).until(interrupted::get);
    // its outcome was dropped before any write-back: the other replica's claim stands
    assertThat(fx.count("id = ? AND lease_owner = 'other' AND status = 0", s.id())).isEqualTo(1);
    assertThat(counting.casConflicts.get()).isZero();
  }

  @Test
  void runOnceReturnsWhenAFencedHandlerLeavesNotAfterItsTimeoutAndLease() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm =
        fx.build(fx.builder().replicaId("a").lease(Duration.ofMillis(1200)).listener(counting));
    CountDownLatch started = new CountDownLatch(1);
    lm.register(
        "t.f",
        m -> {
          started.countDown();
          try {
            TimeUnit.SECONDS.sleep(20);
          } catch (InterruptedException e) {
            // fenced: leave at once
          }
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(30)).build());
    SaveResult s = fx.save(lm, action("t.f", "k"));
    java.util.concurrent.CompletableFuture<Integer> once =
        java.util.concurrent.CompletableFuture.supplyAsync(lm::runOnce);
    await().atMost(Duration.ofSeconds(5)).until(() -> started.getCount() == 0);
    // another replica took the ticket over (as if this one had been frozen past its lease)
    Sql.update(
        ds,
        "UPDATE "
            + fx.table
            + " SET version = version + 1, lease_owner = 'other', attempts = attempts + 1 WHERE id = ?",
        s.id());
    await().atMost(Duration.ofSeconds(5)).until(() -> counting.fenced.get() == 1);
    // its outcome is dropped, and that is the end of it: runOnce does not wait out the 30 s
    // handler timeout and the lease for a write-back that will never come
    assertThat(once).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(1);
    assertThat(fx.count("id = ? AND lease_owner = 'other' AND status = 0", s.id())).isEqualTo(1);
  }

  @Test
  void anOutageLongerThanTheLeaseDropsTheOutcomeCountedAndTheTicketRunsAgain() {
    Outage outage = new Outage(ds);
    fx.build(fx.builder()).close();
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm =
        fx.build(
            fx.builder(outage)
                .lease(Duration.ofMillis(1200))
                .autoCreateSchema(false)
                .listener(counting));
    AtomicInteger runs = new AtomicInteger();
    lm.register(
        "t.o",
        m -> {
          if (runs.incrementAndGet() == 1) {
            outage.down.set(true);
          }
        },
        EngineFixture.config().maxAttempts(5).build());
    lm.start();
    fx.save(lm, action("t.o", "k"));
    await().atMost(Duration.ofSeconds(5)).until(() -> counting.writeBackDropped.get() == 1);
    outage.down.set(false);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
    assertThat(runs.get()).isEqualTo(2);
  }

  /** Replica "a", whose leases are renewed for 1.2 s of a handler's run at most. */
  private LocalMessagesBuilder cappedReplicaA(EngineListener listener) {
    return fx.builder()
        .replicaId("a")
        .lease(Duration.ofMillis(1200))
        .maxExecutionTime(Duration.ofMillis(1200))
        .listener(listener);
  }

  /** One slot, held by the wedged thread: replica a cannot claim the message again itself. */
  private static HandlerConfig oneWedgedSlot() {
    return EngineFixture.config()
        .handlerTimeout(Duration.ofMillis(500))
        .maxAttempts(5)
        .concurrency(1)
        .build();
  }

  /** Waits for {@code latch} at most {@code d}, as a handler that ignores interrupts does. */
  static void awaitIgnoringInterrupts(CountDownLatch latch, Duration d) {
    long end = System.nanoTime() + d.toNanos();
    boolean interrupted = false;
    while (latch.getCount() > 0 && end - System.nanoTime() > 0) {
      try {
        latch.await(end - System.nanoTime(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void anOutcomeArrivingAfterATakeoverIsFencedWhileTheNewOwnerStillRunsIt() throws Exception {
    EngineFixture.Counting countingA = new EngineFixture.Counting();
    CountDownLatch aInside = new CountDownLatch(1);
    CountDownLatch aMayLeave = new CountDownLatch(1);
    CountDownLatch bInside = new CountDownLatch(1);
    CountDownLatch bMayLeave = new CountDownLatch(1);
    LocalMessages a = fx.build(cappedReplicaA(countingA));
    a.register(
        "t.w",
        m -> {
          aInside.countDown();
          awaitIgnoringInterrupts(aMayLeave, Duration.ofSeconds(20));
        },
        oneWedgedSlot());
    a.start();
    SaveResult s = fx.save(a, action("t.w", "k"));
    assertThat(aInside.await(5, TimeUnit.SECONDS)).isTrue();
    LocalMessages b = fx.build(fx.builder().replicaId("b").lease(Duration.ofSeconds(5)));
    b.register(
        "t.w",
        m -> {
          bInside.countDown();
          assertThat(bMayLeave.await(20, TimeUnit.SECONDS)).isTrue();
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(20)).maxAttempts(5).build());
    b.start();
    // a's lease is no longer renewed after maxExecutionTime: b takes the message over
    assertThat(bInside.await(10, TimeUnit.SECONDS)).isTrue();
    // a's handler ends now, while b still runs the message: its outcome must not touch b's claim
    aMayLeave.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> countingA.casConflicts.get() == 1);
    assertThat(fx.count("id = ? AND lease_owner = 'b' AND status = 0 AND attempts = 2", s.id()))
        .as("b's claim stands")
        .isEqualTo(1);
    bMayLeave.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
  }

  @Test
  void aWedgedHandlerPastMaxExecutionTimeLosesItsTicketAndItsOutcomeIsDropped() {
    Executions ex = new Executions();
    EngineFixture.Counting countingA = new EngineFixture.Counting();
    HandlerConfig config =
        EngineFixture.config().handlerTimeout(Duration.ofMillis(500)).maxAttempts(5).build();
    LocalMessages a = fx.build(cappedReplicaA(countingA));
    a.register(
        "t.w",
        m -> {
          long start = ex.enter(m);
          try {
            workIgnoringInterrupts(Duration.ofSeconds(5));
          } finally {
            ex.leave(m, "a", start);
          }
        },
        oneWedgedSlot());
    a.start();
    fx.save(a, action("t.w", "k"));
    await().atMost(Duration.ofSeconds(5)).until(() -> ex.active.size() == 1);
    LocalMessages b = fx.build(fx.builder().replicaId("b").lease(Duration.ofMillis(1200)));
    b.register(
        "t.w",
        m -> {
          long start = ex.enter(m);
          ex.leave(m, "b", start);
        },
        config);
    b.start();
    // a's lease is no longer renewed after maxExecutionTime, so b takes the ticket over
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
    await().atMost(Duration.ofSeconds(10)).until(() -> countingA.casConflicts.get() == 1);
    assertThat(ex.runs).extracting(Executions.Run::replica).containsExactly("b", "a");
  }

  @Test
  void healthReportsAStuckPollerAndItsRecovery() throws Exception {
    DataSource one = db.dataSource(1);
    fx.build(fx.builder()).close();
    LocalMessages lm =
        fx.build(
            fx.builder(one)
                .wakeUps(false)
                .autoCreateSchema(false)
                .loopStuckAfter(Duration.ofMillis(400))
                .replicaId("h"));
    lm.register("t.h", m -> {}, EngineFixture.config().build());
    lm.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> lm.health().healthy());
    assertThat(lm.health().loops())
        .extracting(EngineHealth.Loop::name)
        .contains("poller", "writer", "watchdog", "renewer", "maintenance");
    assertThat(lm.health().running()).isTrue();
    try (Connection held = one.getConnection()) {
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  lm.health().loops().stream()
                      .anyMatch(l -> l.name().equals("poller") && l.stuck()));
      assertThat(lm.health().healthy()).isFalse();
      assertThat(held.isValid(1)).isTrue();
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> lm.health().healthy());
  }

  @Test
  void anEngineDrivenByRunOnceIsNotReportedStuck() {
    LocalMessages lm = fx.build(fx.builder().loopStuckAfter(Duration.ofMillis(100)));
    lm.register("t.manual", m -> {}, EngineFixture.config().build());
    fx.save(lm, action("t.manual", "k"));
    assertThat(lm.runOnce()).isEqualTo(1);
    Waits.holds(
        "healthy, not running",
        Duration.ofMillis(400),
        () -> lm.health().healthy() && !lm.health().running());
  }
}
