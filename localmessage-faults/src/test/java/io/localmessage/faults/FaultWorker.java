package io.localmessage.faults;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.Backoff;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.PermanentFailure;
import io.localmessage.inbox.Inbox;
import io.localmessage.spi.EngineListener;
import java.io.InputStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One worker process of the fault suite: an engine on the ticket database whose ACTION handler
 * applies an effect row in the effects database through the inbox (or without it, to prove the
 * suite can fail). It misbehaves on purpose: some deliveries throw before applying, some after,
 * some hang past the handler timeout and the lease after applying. It runs until killed (SIGKILL
 * from the suite) or until its standard input closes (graceful close).
 */
public final class FaultWorker {
  static final String TYPE = "effect.apply";
  static final String TABLE = "lm";
  static final String EVENT_TYPE = "fx.event";

  private FaultWorker() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = parse(args);
    String replica = a.get("replica");
    boolean inboxOn = Boolean.parseBoolean(a.getOrDefault("inbox", "true"));
    long exhaustAfterMs = Long.parseLong(a.getOrDefault("exhaust-after-ms", "-1"));
    HikariDataSource lmPool = pool(a.get("lm-url"), a.get("lm-user"), 12, replica + "-lm");
    HikariDataSource fxPool = pool(a.get("fx-url"), a.get("fx-user"), 12, replica + "-fx");
    // dialects named, not detected: a replacement may start while the database restarts
    Inbox inbox = Inbox.create(fxPool, "fx_inbox", dialectOf(a.get("fx-url")));
    Counters counters = new Counters();

    LocalMessages lm =
        LocalMessages.builder(lmPool)
            .table(TABLE)
            .dialect(dialectOf(a.get("lm-url")))
            .replicaId(replica)
            .concurrency(8)
            .lease(Duration.ofSeconds(8))
            .writeBackMargin(Duration.ofMillis(500))
            .pollInterval(Duration.ofMillis(50))
            .maintenanceInterval(Duration.ofMillis(500))
            .shutdownTimeout(Duration.ofSeconds(2))
            .listener(counters)
            .build();
    lm.register(
        TYPE,
        m -> {
          String key = m.idemKey();
          counters.deliveries.incrementAndGet();
          log(fxPool, key, replica, m.attempt(), "delivery");
          if (key.startsWith("perm-")) {
            throw new PermanentFailure("rejected by the suite (permanent by design)");
          }
          ThreadLocalRandom r = ThreadLocalRandom.current();
          if (r.nextInt(100) < 10) {
            throw new IllegalStateException("injected failure before applying");
          }
          boolean applied = apply(fxPool, inbox, inboxOn, key, replica, m.attempt());
          if (!applied) {
            counters.inboxDuplicates.incrementAndGet();
            log(fxPool, key, replica, m.attempt(), "duplicate");
          }
          if (applied && m.attempt() == 1 && Math.floorMod(key.hashCode(), 97) == 0) {
            // applied, then hangs past the handler timeout and the lease: the engine interrupts it
            // and another delivery follows, which only the inbox can make harmless
            Thread.sleep(10_000);
          }
          if (r.nextInt(100) < 5) {
            throw new IllegalStateException("injected failure after applying");
          }
        },
        HandlerConfig.builder()
            .maxAttempts(1000)
            .handlerTimeout(Duration.ofSeconds(2))
            .backoff(Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(500)).jitter(0.5))
            .build());
    String bootstrap = a.get("bootstrap");
    io.localmessage.kafka.KafkaRelay relay = null;
    if (bootstrap != null && !bootstrap.isBlank()) {
      relay =
          io.localmessage.kafka.KafkaRelay.builder()
              .producerProperties(
                  Map.of(
                      "bootstrap.servers",
                      bootstrap,
                      "client.id",
                      replica,
                      "request.timeout.ms",
                      1500,
                      "linger.ms",
                      5))
              .deliveryTimeout(Duration.ofSeconds(2))
              .maxBlock(Duration.ofSeconds(1))
              .build();
      relay.register(
          lm,
          EVENT_TYPE,
          HandlerConfig.builder()
              .maxAttempts(1000)
              .handlerTimeout(relay.requiredHandlerTimeout())
              .batchSize(100)
              .backoff(Backoff.exponential(Duration.ofMillis(50), Duration.ofMillis(500)))
              .build());
    }
    lm.start();

    Thread stats = new Thread(() -> flushStatsLoop(fxPool, replica, counters), "fault-stats");
    stats.setDaemon(true);
    stats.start();
    if (exhaustAfterMs >= 0) {
      Thread exhaust = new Thread(() -> exhaust(lmPool, exhaustAfterMs), "fault-exhaust");
      exhaust.setDaemon(true);
      exhaust.start();
    }
    System.out.println("READY " + replica);
    System.out.flush();
    InputStream in = System.in;
    while (in.read() >= 0) {
      // the suite closes stdin to ask for a graceful stop
    }
    lm.close();
    if (relay != null) {
      relay.close();
    }
    flushStats(fxPool, replica, counters);
    lmPool.close();
    fxPool.close();
    System.out.println("STOPPED " + replica);
  }

  private static boolean apply(
      HikariDataSource fx, Inbox inbox, boolean inboxOn, String key, String replica, int attempt)
      throws SQLException {
    try (Connection c = fx.getConnection()) {
      c.setAutoCommit(false);
      try {
        if (inboxOn && !inbox.tryRecord(c, "effects", key)) {
          c.commit();
          return false;
        }
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO fx_effect (idem_key, replica, attempt) VALUES (?, ?, ?)")) {
          ps.setString(1, key);
          ps.setString(2, replica);
          ps.setInt(3, attempt);
          ps.executeUpdate();
        }
        c.commit();
        return true;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /** One row per delivery (and per duplicate the inbox caught): exact even for killed workers. */
  private static void log(HikariDataSource fx, String key, String replica, int attempt, String what)
      throws SQLException {
    try (Connection c = fx.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO fx_delivery (idem_key, replica, attempt, what) VALUES (?, ?, ?, ?)")) {
      c.setAutoCommit(true);
      ps.setString(1, key);
      ps.setString(2, replica);
      ps.setInt(3, attempt);
      ps.setString(4, what);
      ps.executeUpdate();
    }
  }

  /** Holds every connection of the ticket pool for 3 s: the engine must ride it out. */
  private static void exhaust(HikariDataSource pool, long afterMs) {
    try {
      Thread.sleep(afterMs);
      List<Connection> held = new ArrayList<>();
      try {
        for (int i = 0; i < pool.getMaximumPoolSize(); i++) {
          held.add(pool.getConnection());
        }
        System.out.println("EXHAUSTED " + held.size());
        Thread.sleep(3000);
      } finally {
        for (Connection c : held) {
          c.close();
        }
      }
    } catch (Exception e) {
      System.out.println("EXHAUST_FAILED " + e);
    }
  }

  private static void flushStatsLoop(HikariDataSource fx, String replica, Counters c) {
    while (true) {
      try {
        Thread.sleep(300);
        flushStats(fx, replica, c);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException | SQLException e) {
        // the effects database may be briefly unreachable; the next flush catches up
      }
    }
  }

  private static void flushStats(HikariDataSource fx, String replica, Counters c)
      throws SQLException {
    try (Connection conn = fx.getConnection()) {
      conn.setAutoCommit(true);
      try (PreparedStatement del =
              conn.prepareStatement("DELETE FROM fx_worker_stats WHERE replica = ?");
          PreparedStatement ins =
              conn.prepareStatement(
                  "INSERT INTO fx_worker_stats (replica,"
                      + " deliveries, inbox_duplicates, lease_reclaims, cas_conflicts, expired)"
                      + " VALUES (?, ?, ?, ?, ?, ?)")) {
        del.setString(1, replica);
        del.executeUpdate();
        ins.setString(1, replica);
        ins.setLong(2, c.deliveries.get());
        ins.setLong(3, c.inboxDuplicates.get());
        ins.setLong(4, c.leaseReclaims.get());
        ins.setLong(5, c.casConflicts.get());
        ins.setLong(6, c.expired.get());
        ins.executeUpdate();
      }
    }
  }

  private static HikariDataSource pool(String url, String user, int size, String name) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(url);
    c.setUsername(user);
    c.setPassword("");
    c.setMaximumPoolSize(size);
    c.setPoolName(name);
    c.setConnectionTimeout(5_000);
    c.setValidationTimeout(1_000);
    // a replacement may start while the database restarts: start anyway, connect later
    c.setInitializationFailTimeout(-1);
    return new HikariDataSource(c);
  }

  private static io.localmessage.spi.Dialect dialectOf(String url) {
    return io.localmessage.jdbc.Dialects.byName(
        url.startsWith("jdbc:postgresql")
            ? "postgresql"
            : url.startsWith("jdbc:h2") ? "h2" : "mysql");
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> m = new HashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      m.put(arg.substring(2, eq), arg.substring(eq + 1));
    }
    return m;
  }

  /** Engine events this process counts (flushed to the effects database). */
  static final class Counters implements EngineListener {
    final AtomicLong deliveries = new AtomicLong();
    final AtomicLong inboxDuplicates = new AtomicLong();
    final AtomicLong leaseReclaims = new AtomicLong();
    final AtomicLong casConflicts = new AtomicLong();
    final AtomicLong expired = new AtomicLong();

    @Override
    public void claimed(String bizType, int claimed, int reclaims, Duration queryTime) {
      leaseReclaims.addAndGet(reclaims);
    }

    @Override
    public void casConflicts(String bizType, int count) {
      casConflicts.addAndGet(count);
    }

    @Override
    public void expiredLastAttempt(int count) {
      expired.addAndGet(count);
    }
  }
}
