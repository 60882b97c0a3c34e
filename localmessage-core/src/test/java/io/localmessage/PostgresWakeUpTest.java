package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import io.localmessage.testing.Waits;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** Cross-replica wake-ups through LISTEN/NOTIFY, and the retry timing, on PostgreSQL. */
class PostgresWakeUpTest extends AbstractWakeUpTest {
  private final AtomicLong lastStart = new AtomicLong();

  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }

  private LocalMessages worker(String replica, AtomicInteger ran) {
    LocalMessages w = fx.build(fx.builder().replicaId(replica).pollInterval(SLOW_POLL));
    w.register(
        "t.w",
        m -> {
          lastStart.set(System.nanoTime());
          ran.incrementAndGet();
        },
        EngineFixture.config().build());
    w.start();
    awaitListening(w);
    return w;
  }

  private static void awaitListening(LocalMessages w) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                w.health().loops().stream()
                    .anyMatch(l -> l.name().equals("listener") && l.lastSuccess() != null));
  }

  @Test
  void aTicketSavedOnAReplicaWithoutItsHandlerStartsOnAnotherAtOnce() {
    AtomicInteger ran = new AtomicInteger();
    LocalMessages w = worker("worker", ran);
    // without wake-ups a ticket waits for the worker's next poll (10 s away)
    LocalMessages quiet = fx.build(fx.builder().replicaId("quiet").wakeUps(false));
    quiet.inTransaction(c -> quiet.save(c, action("t.w", "k0")));
    Waits.holds("not run", Duration.ofMillis(1500), () -> ran.get() == 0);

    LocalMessages producer = fx.build(fx.builder().replicaId("producer"));
    long t0 = System.nanoTime();
    producer.inTransaction(c -> producer.save(c, action("t.w", "k1")));
    await().atMost(Duration.ofSeconds(2)).until(() -> ran.get() == 2);
    System.out.printf(
        "[wake-up] commit -> handler on another replica: %.1f ms%n", (lastStart.get() - t0) / 1e6);
    assertThat(lastStart.get() - t0).isLessThan(TimeUnit.SECONDS.toNanos(1));
    assertThat(w.health().healthy()).isTrue();
  }

  /**
   * The listening connection goes back to the pool with the application name it was handed out
   * with: the listener names its session while it listens, and a {@code RESET} would leave the
   * server's default (empty) on a connection whose name the driver set after connecting, so the
   * application's own name (here the pool's) was lost on that pooled connection.
   */
  @Test
  void theListeningConnectionGoesBackToThePoolWithTheApplicationNameItHad() throws Exception {
    DataSource two = db.dataSource(2);
    fx.build(fx.builder()).close(); // the tables
    LocalMessages w = fx.build(fx.builder(two).autoCreateSchema(false).replicaId("w-name"));
    w.register("t.name", m -> {}, EngineFixture.config().build());
    w.start();
    awaitListening(w);
    w.close();
    List<String> names = new ArrayList<>();
    try (Connection c1 = two.getConnection();
        Connection c2 = two.getConnection()) {
      for (Connection c : List.of(c1, c2)) {
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("SHOW application_name")) {
          rs.next();
          names.add(rs.getString(1));
        }
      }
    }
    assertThat(names).allMatch(n -> n.startsWith(db.name() + "-"), "the pool's own name");
  }

  @Test
  void theListeningConnectionReconnectsAfterItIsKilled() {
    AtomicInteger ran = new AtomicInteger();
    LocalMessages w = worker("w-kill", ran);
    String app = "localmessage-listener-w-kill";
    long before =
        Sql.count(
            ds,
            "SELECT COALESCE(MAX(pid), 0) FROM pg_stat_activity WHERE application_name = ?",
            app);
    assertThat(before).isPositive();
    Sql.count(
        ds,
        "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?",
        app);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              long now =
                  Sql.count(
                      ds,
                      "SELECT COALESCE(MAX(pid), 0) FROM pg_stat_activity WHERE application_name = ?",
                      app);
              return now != 0 && now != before;
            });
    // the killed connection did not go back to the pool: every connection it hands out works
    List<java.sql.Connection> held = new ArrayList<>();
    try {
      for (int i = 0; i < 12; i++) {
        java.sql.Connection c = ds.getConnection();
        held.add(c);
        try (java.sql.Statement st = c.createStatement()) {
          st.execute("SELECT 1");
        }
      }
    } catch (java.sql.SQLException e) {
      throw new AssertionError("a pooled connection is broken after the listener's was killed", e);
    } finally {
      for (java.sql.Connection c : held) {
        try {
          c.close();
        } catch (java.sql.SQLException ignored) {
          // closing
        }
      }
    }
    LocalMessages producer = fx.build(fx.builder().replicaId("producer"));
    producer.inTransaction(c -> producer.save(c, action("t.w", "after-reconnect")));
    await().atMost(Duration.ofSeconds(2)).until(() -> ran.get() == 1);
    assertThat(w.health().healthy()).isTrue();
  }

  @Test
  void aBurstOfSavesIsCoalescedIntoFewWakeUps() throws Exception {
    AtomicInteger ran = new AtomicInteger();
    worker("w-burst", ran);
    AtomicLong requests = new AtomicLong();
    AtomicLong sent = new AtomicLong();
    LocalMessages producer =
        fx.build(
            fx.builder()
                .replicaId("burst")
                .listener(
                    new io.localmessage.spi.EngineListener() {
                      @Override
                      public void wakeUpSent(int covered) {
                        sent.incrementAndGet();
                        requests.addAndGet(covered);
                      }
                    }));
    int n = 4_000;
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int part = t;
        done.add(
            pool.submit(
                () -> {
                  for (int i = part; i < n; i += 4) {
                    String key = "b-" + i;
                    producer.inTransaction(c -> producer.save(c, action("t.w", key)));
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> ran.get() == n && requests.get() == n);
    System.out.printf("[wake-up] %d saves -> %d notifications%n", n, sent.get());
    assertThat(sent.get()).as("notifications for %d saves", n).isLessThan(n / 3);
  }

  @Test
  void aRequeueWakesTheWorkers() {
    AtomicInteger calls = new AtomicInteger();
    LocalMessages w = fx.build(fx.builder().replicaId("w-rq").pollInterval(SLOW_POLL));
    w.register(
        "t.rq",
        m -> {
          if (calls.incrementAndGet() == 1) {
            throw new PermanentFailure("first time");
          }
        },
        EngineFixture.config().build());
    w.start();
    awaitListening(w);
    LocalMessages operator = fx.build(fx.builder().replicaId("ops"));
    SaveResult s = operator.inTransaction(c -> operator.save(c, action("t.rq", "k")));
    await().atMost(Duration.ofSeconds(2)).until(() -> fx.count("status = 2") == 1);
    operator.admin().requeueDead(List.of(s.id()), "ops", "fixed upstream");
    await().atMost(Duration.ofSeconds(2)).until(() -> fx.countAll() == 0);
    assertThat(calls.get()).isEqualTo(2);
  }

  /** Counts statements prepared or created through a data source; may hide the driver. */
  private static javax.sql.DataSource counting(
      javax.sql.DataSource real, AtomicInteger statements, boolean hideDriver) {
    ClassLoader cl = PostgresWakeUpTest.class.getClassLoader();
    return (javax.sql.DataSource)
        java.lang.reflect.Proxy.newProxyInstance(
            cl,
            new Class<?>[] {javax.sql.DataSource.class},
            (p, m, a) -> {
              Object r = invoke(m, real, a);
              if (!m.getName().equals("getConnection")) {
                return r;
              }
              java.sql.Connection c = (java.sql.Connection) r;
              return java.lang.reflect.Proxy.newProxyInstance(
                  cl,
                  new Class<?>[] {java.sql.Connection.class},
                  (p2, m2, a2) -> {
                    String n = m2.getName();
                    if (n.startsWith("prepare") || n.equals("createStatement")) {
                      statements.incrementAndGet();
                    }
                    if (hideDriver && (n.equals("unwrap") || n.equals("isWrapperFor"))) {
                      return n.equals("isWrapperFor") ? false : null;
                    }
                    return invoke(m2, c, a2);
                  });
            });
  }

  private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args)
      throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Test
  void anIdleReplicaCostsWhatPollingCostsWithOrWithoutAWorkingListener() {
    for (boolean hide : new boolean[] {false, true}) {
      AtomicInteger statements = new AtomicInteger();
      LocalMessages lm =
          fx.build(
              fx.builder(counting(ds, statements, hide))
                  .replicaId(hide ? "idle-hidden" : "idle")
                  .pollInterval(Duration.ofMillis(200))
                  .maintenanceInterval(Duration.ofSeconds(10)));
      lm.register("t.idle", m -> {}, EngineFixture.config().build());
      lm.start();
      if (!hide) {
        awaitListening(lm);
      }
      Waits.window(Duration.ofMillis(500)); // the start's own statements are not counted
      statements.set(0);
      // two seconds of nothing to do: a claim and a paused-types read per 200 ms poll, plus
      // maintenance; a listener that reconnected in a loop would add several per poll. A window
      // that a loaded machine stretched allows the same per second of it.
      Duration window = Waits.window(Duration.ofSeconds(2));
      assertThat(statements.get())
          .as("statements in %s, driver hidden: %s", window, hide)
          .isLessThan(15 * Math.max(2, (int) Math.ceil(window.toMillis() / 1000.0)));
      lm.close();
    }
  }
}
