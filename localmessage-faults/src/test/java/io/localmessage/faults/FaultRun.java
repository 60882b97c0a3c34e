package io.localmessage.faults;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.io.File;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * One fault-suite run: worker processes on a ticket database, a producer saving tickets in business
 * transactions, and a chaos loop (SIGKILL of random workers, a database restart, a pool exhaustion
 * burst) while it runs; then the books are checked.
 */
final class FaultRun {
  /** What a run is asked to do. */
  record Plan(
      int tickets,
      int workers,
      Duration killEvery,
      boolean inbox,
      boolean restartDatabase,
      Duration deadline,
      boolean kafka) {}

  /** What a run observed. */
  record Report(
      int saved,
      int expectedEffects,
      int expectedDead,
      long pendingLeft,
      long dead,
      long deadNotByDesign,
      long effectRows,
      long distinctEffects,
      long lost,
      long doubleApplied,
      long deliveries,
      long inboxDuplicates,
      long leaseReclaims,
      long casConflicts,
      int kills,
      long restartDowntimeMs,
      double seconds,
      int events,
      long eventRows,
      long eventDistinct,
      int brokerKills,
      int consumerKills) {

    long eventsLost() {
      return events - eventDistinct;
    }

    long eventsDoubleApplied() {
      return eventRows - eventDistinct;
    }

    String describe() {
      return String.format(
          "tickets saved=%d expected effects=%d expected dead=%d | pending left=%d"
              + " dead=%d (not by design: %d) | effect rows=%d distinct=%d lost=%d double-applied=%d"
              + " | deliveries=%d inbox duplicates caught=%d lease takeovers=%d CAS conflicts=%d"
              + " kills=%d database restart downtime survived=%d ms | events saved=%d"
              + " event effects=%d distinct=%d lost=%d double-applied=%d broker kills=%d"
              + " consumer kills=%d | %.1f s",
          saved,
          expectedEffects,
          expectedDead,
          pendingLeft,
          dead,
          deadNotByDesign,
          effectRows,
          distinctEffects,
          lost,
          doubleApplied,
          deliveries,
          inboxDuplicates,
          leaseReclaims,
          casConflicts,
          kills,
          restartDowntimeMs,
          events,
          eventRows,
          eventDistinct,
          eventsLost(),
          eventsDoubleApplied(),
          brokerKills,
          consumerKills,
          seconds);
    }
  }

  private final Plan plan;
  private final TestDatabase ticketsDb;
  private final TestDatabase effectsDb;
  private final DataSource tickets;
  private final DataSource effects;
  private final List<Process> workers = new ArrayList<>();
  private final AtomicInteger replicaSeq = new AtomicInteger();
  private final Random random = new Random(42);
  private final File logDir;
  private final AtomicInteger events = new AtomicInteger();
  private BrokerProcess broker;
  private Process consumer;

  FaultRun(Plan plan, TestDatabase ticketsDb, TestDatabase effectsDb) {
    this.plan = plan;
    this.ticketsDb = ticketsDb;
    this.effectsDb = effectsDb;
    this.tickets = ticketsDb.dataSource(4);
    this.effects = effectsDb.dataSource(4);
    this.logDir = new File("target/faults");
    this.logDir.mkdirs();
  }

  Report run() throws Exception {
    try {
      return runChaos();
    } finally {
      // whatever happened, leave no worker, consumer or broker process behind
      for (Process p : workers) {
        p.destroyForcibly();
      }
      if (consumer != null) {
        consumer.destroyForcibly();
      }
      if (broker != null) {
        broker.close();
      }
    }
  }

  private Report runChaos() throws Exception {
    prepareSchemas();
    long t0 = System.nanoTime();
    if (plan.kafka()) {
      broker =
          new BrokerProcess(
              java.nio.file.Files.createTempDirectory(logDir.toPath().toAbsolutePath(), "broker-"));
      broker.start();
      startConsumer();
    }
    for (int i = 0; i < plan.workers(); i++) {
      startWorker(-1);
    }
    AtomicLong saved = new AtomicLong();
    AtomicInteger permanent = new AtomicInteger();
    Thread producer = new Thread(() -> produce(saved, permanent), "fault-producer");
    producer.start();

    int kills = 0;
    int brokerKills = 0;
    int consumerKills = 0;
    long downtime = 0;
    boolean restarted = false;
    boolean exhausted = false;
    long killEveryNanos = plan.killEvery().toNanos();
    long nextKill = System.nanoTime() + killEveryNanos;
    long deadline = System.nanoTime() + plan.deadline().toNanos();
    while (producer.isAlive() || pending() > 0) {
      if (System.nanoTime() > deadline) {
        break;
      }
      double progress = saved.get() / (double) plan.tickets();
      if ((producer.isAlive() || kills < 3) && System.nanoTime() >= nextKill) {
        killRandomWorker();
        kills++;
        startWorker(!exhausted && progress > 0.5 ? 500 : -1);
        exhausted |= progress > 0.5;
        nextKill = System.nanoTime() + killEveryNanos;
      }
      if (plan.kafka() && brokerKills == 0 && progress > 0.55) {
        broker.kill(); // SIGKILL: in-flight sends fail, tickets stay PENDING and retry
        brokerKills++;
        waitQuietly(Duration.ofSeconds(3));
        broker.start();
      }
      if (plan.kafka() && consumerKills == 0 && progress > 0.7) {
        consumer.destroyForcibly();
        consumer.waitFor(10, TimeUnit.SECONDS);
        consumerKills++;
        startConsumer();
      }
      if (plan.restartDatabase() && !restarted && progress > 0.35) {
        downtime = DatabaseRestart.restart(ticketsDb.kind());
        restarted = true;
      }
      waitQuietly(Duration.ofMillis(200));
    }
    producer.join(TimeUnit.MINUTES.toMillis(1));
    while (plan.kafka() && System.nanoTime() < deadline && eventDistinct() < events.get()) {
      if (!consumer.isAlive()) {
        throw new IllegalStateException(
            "the consumer process died: see target/faults/consumer.log");
      }
      waitQuietly(Duration.ofMillis(200)); // the consumer catches up after the relay drained
    }
    stopWorkers();
    if (consumer != null) {
      consumer.getOutputStream().close();
      if (!consumer.waitFor(20, TimeUnit.SECONDS)) {
        consumer.destroyForcibly();
      }
    }
    if (broker != null) {
      broker.close();
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    return report(
        (int) saved.get(), permanent.get(), kills, downtime, seconds, brokerKills, consumerKills);
  }

  private void prepareSchemas() throws SQLException {
    // the ticket tables, and in the effects database the inbox next to the effects
    LocalMessages.builder(tickets).table(FaultWorker.TABLE).autoCreateSchema(true).build().close();
    LocalMessages.builder(effects)
        .table("fx_lm")
        .inboxTable("fx_inbox")
        .autoCreateSchema(true)
        .build()
        .close();
    exec(tickets, "CREATE TABLE biz_order (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL)");
    exec(
        effects,
        "CREATE TABLE fx_effect (id BIGINT NOT NULL"
            + (effectsDb.kind() == TestDatabase.Kind.MARIADB
                ? " AUTO_INCREMENT"
                : " GENERATED BY DEFAULT AS IDENTITY")
            + " PRIMARY KEY, idem_key VARCHAR(128) NOT NULL, replica VARCHAR(64), attempt INT)");
    exec(effects, "CREATE TABLE fx_event_effect (event_key VARCHAR(128) NOT NULL)");
    exec(
        effects,
        "CREATE TABLE fx_delivery (idem_key VARCHAR(128) NOT NULL,"
            + " replica VARCHAR(64), attempt INT, what VARCHAR(16))");
    exec(
        effects,
        "CREATE TABLE fx_worker_stats (replica VARCHAR(64) PRIMARY KEY,"
            + " deliveries BIGINT, inbox_duplicates BIGINT, lease_reclaims BIGINT,"
            + " cas_conflicts BIGINT, expired BIGINT)");
  }

  private static void exec(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /** Saves every ticket with its order in one transaction, surviving the database restart. */
  private void produce(AtomicLong saved, AtomicInteger permanent) {
    LocalMessages saver = LocalMessages.builder(tickets).table(FaultWorker.TABLE).build();
    String upsertOrder =
        ticketsDb.kind() == TestDatabase.Kind.MARIADB
            ? "INSERT INTO biz_order (id, amount) VALUES (?, ?) ON DUPLICATE KEY UPDATE id = id"
            : "INSERT INTO biz_order (id, amount) VALUES (?, ?) ON CONFLICT (id) DO NOTHING";
    int i = 0;
    while (i < plan.tickets()) {
      int batchEnd = Math.min(plan.tickets(), i + 50);
      try (Connection c = tickets.getConnection()) {
        c.setAutoCommit(false);
        int perm = 0;
        int evs = 0;
        for (int k = i; k < batchEnd; k++) {
          String id = "order-" + k;
          try (PreparedStatement ps = c.prepareStatement(upsertOrder)) {
            ps.setString(1, id);
            ps.setInt(2, k % 1000);
            ps.executeUpdate();
          }
          boolean isPermanent = k % 100 == 99;
          perm += isPermanent ? 1 : 0;
          saver.save(
              c,
              NewMessage.action(FaultWorker.TYPE, (isPermanent ? "perm-" : "fx-") + k)
                  .aggregateId(id)
                  .payload("{\"order\":\"" + id + "\"}")
                  .build());
          if (plan.kafka() && k % 2 == 0) {
            evs++;
            saver.save(
                c,
                NewMessage.event(FaultWorker.EVENT_TYPE, "evt-" + k)
                    .aggregateId("evt-" + k)
                    .destination(FaultConsumer.TOPIC)
                    .payload("{\"order\":\"" + id + "\"}")
                    .build());
          }
        }
        c.commit();
        permanent.addAndGet(perm);
        events.addAndGet(evs);
        i = batchEnd;
        saved.set(i);
      } catch (SQLException | RuntimeException e) {
        // the database restarted under us; the same orders and keys are saved again, and both
        // the order insert and the ticket save are idempotent
        waitQuietly(Duration.ofMillis(200));
      }
    }
  }

  private long pending() {
    try {
      return Sql.count(tickets, "SELECT COUNT(*) FROM " + FaultWorker.TABLE + " WHERE status = 0");
    } catch (RuntimeException e) {
      return Long.MAX_VALUE; // unknown while the database restarts
    }
  }

  private void startWorker(long exhaustAfterMs) throws IOException {
    String replica = "w" + replicaSeq.incrementAndGet();
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> cmd =
        new ArrayList<>(
            List.of(
                new File(System.getProperty("java.home"), "bin/java").getPath(),
                "-Xmx256m",
                "-cp",
                cp,
                FaultWorker.class.getName(),
                "--replica=" + replica,
                "--lm-url=" + ticketsDb.jdbcUrl(),
                "--lm-user=" + ticketsDb.user(),
                "--fx-url=" + effectsDb.jdbcUrl(),
                "--fx-user=" + effectsDb.user(),
                "--inbox=" + plan.inbox(),
                "--exhaust-after-ms=" + exhaustAfterMs,
                "--bootstrap=" + (broker == null ? "" : broker.bootstrap())));
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(new File(logDir, replica + ".log"))
            .start();
    workers.add(p);
  }

  private long eventDistinct() {
    try {
      return Sql.count(effects, "SELECT COUNT(DISTINCT event_key) FROM fx_event_effect");
    } catch (RuntimeException e) {
      return -1;
    }
  }

  private void startConsumer() throws IOException {
    consumer =
        BrokerProcess.java(
                List.of(
                    FaultConsumer.class.getName(),
                    "--fx-url=" + effectsDb.jdbcUrl(),
                    "--fx-user=" + effectsDb.user(),
                    "--bootstrap=" + broker.bootstrap()))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(new File(logDir, "consumer.log")))
            .start();
  }

  private void killRandomWorker() throws InterruptedException {
    List<Process> alive = workers.stream().filter(Process::isAlive).toList();
    if (alive.isEmpty()) {
      return;
    }
    Process victim = alive.get(random.nextInt(alive.size()));
    victim.destroyForcibly(); // SIGKILL: no lease release, no write-back
    victim.waitFor(10, TimeUnit.SECONDS);
  }

  private void stopWorkers() throws InterruptedException {
    for (Process p : workers) {
      if (p.isAlive()) {
        try {
          p.getOutputStream().close(); // graceful: the worker closes its engine
        } catch (IOException ignored) {
          // already gone
        }
      }
    }
    for (Process p : workers) {
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  private Report report(
      int saved,
      int permanent,
      int kills,
      long downtime,
      double seconds,
      int brokerKills,
      int consumerKills) {
    long pendingLeft = pending();
    long dead = Sql.count(tickets, "SELECT COUNT(*) FROM lm WHERE status = 2");
    long deadNotByDesign =
        Sql.count(
            tickets, "SELECT COUNT(*) FROM lm WHERE status = 2 AND idem_key NOT LIKE 'perm-%'");
    long rows = Sql.count(effects, "SELECT COUNT(*) FROM fx_effect");
    long distinct = Sql.count(effects, "SELECT COUNT(DISTINCT idem_key) FROM fx_effect");
    int expectedEffects = saved - permanent;
    long deliveries =
        Sql.count(effects, "SELECT COUNT(*) FROM fx_delivery WHERE what = 'delivery'");
    long dups = Sql.count(effects, "SELECT COUNT(*) FROM fx_delivery WHERE what = 'duplicate'");
    long reclaims =
        Sql.count(effects, "SELECT COALESCE(SUM(lease_reclaims), 0) FROM fx_worker_stats");
    long cas = Sql.count(effects, "SELECT COALESCE(SUM(cas_conflicts), 0) FROM fx_worker_stats");
    return new Report(
        saved,
        expectedEffects,
        permanent,
        pendingLeft,
        dead,
        deadNotByDesign,
        rows,
        distinct,
        expectedEffects - distinct,
        rows - distinct,
        deliveries,
        dups,
        reclaims,
        cas,
        kills,
        downtime,
        seconds,
        events.get(),
        Sql.count(effects, "SELECT COUNT(*) FROM fx_event_effect"),
        eventDistinct(),
        brokerKills,
        consumerKills);
  }

  static void waitQuietly(Duration d) {
    try {
      // pacing of the chaos loop and the producer's retry, not test synchronization
      TimeUnit.NANOSECONDS.sleep(d.toNanos());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
