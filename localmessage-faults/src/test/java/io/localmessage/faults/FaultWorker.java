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
import java.util.concurrent.TimeUnit;
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

  /** Runs longer than the lease on purpose: the engine must renew the lease meanwhile. */
  static final String LONG_TYPE = "effect.long";

  /**
   * The long handler of the freeze phase, in a type of its own so that no backlog of other long
   * tickets delays its takeover.
   */
  static final String FREEZE_TYPE = "effect.freeze";

  /**
   * The tickets that hang past their timeout ignoring interrupts, in a type of their own with the
   * plain type's policy: a retry written too early (while the handler is still inside) is claimed
   * at once instead of queuing behind the plain type's backlog until the hang has ended, so the
   * overlap it causes shows in the record.
   */
  static final String HANG_TYPE = "effect.hang";

  /**
   * An ordered type: the messages of one aggregate run one after another, in the order their saves
   * committed. Keys are {@code ord-<aggregate>-<producer>-<n>}; two producers save into the same
   * aggregates from overlapping transactions.
   */
  static final String ORDERED_TYPE = "effect.ordered";

  /** The aggregate of an ordered key: {@code ord-a7-1-3} belongs to {@code a7}. */
  static String aggregateOf(String orderedKey) {
    return orderedKey.split("-", 3)[1];
  }

  /** The long type only {@code replica} (and its replacement) registers. */
  static String pinnedType(String replica) {
    return "effect.pinned." + replica;
  }

  /** The long type or a pinned one: handlers that run longer than the lease. */
  static boolean isLong(String bizType) {
    return LONG_TYPE.equals(bizType)
        || FREEZE_TYPE.equals(bizType)
        || bizType.startsWith("effect.pinned.");
  }

  static final Duration LEASE = Duration.ofSeconds(8);
  static final Duration WRITE_BACK_MARGIN = Duration.ofMillis(500);
  static final Duration HANDLER_TIMEOUT = Duration.ofSeconds(2);
  static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(2);
  static final Duration LONG_HANDLER = Duration.ofSeconds(12);

  /**
   * The freeze phase's handler works this long, less than the lease: frozen while it works, it
   * returns at once when resumed, so its late outcome reaches the writer before a renewal could
   * fence it, and only the write-back's version check can drop it.
   */
  static final Duration FREEZE_HANDLER = Duration.ofSeconds(5);

  static final Duration LONG_HANDLER_TIMEOUT = Duration.ofSeconds(30);

  /**
   * The takeover's delivery in the held write-back phase works this long (under the lease), so the
   * stale write-back of the first delivery arrives while the new owner holds the ticket.
   */
  static final Duration STALL_TAKEOVER = Duration.ofSeconds(6);

  /** Past the handler timeout, under the lease. */
  static final Duration HANG_IGNORING = Duration.ofSeconds(4);

  /** Past the shutdown timeout and its grace, under the lease. */
  static final Duration STUBBORN = Duration.ofSeconds(6);

  /**
   * A rolling stop's handlers wait for the stop itself, however long the suite takes to get its
   * successor up first: the stubborn one stays inside this long after the stop is asked for (past
   * the shutdown timeout and its grace, but before the lease it keeps runs out), the interruptible
   * one until the stop interrupts it; neither waits longer than {@link #ROLL_CAP} for a stop.
   */
  static final Duration STUBBORN_AFTER_STOP = Duration.ofMillis(4_500);

  // under the long type's 30 s handler timeout, past the suite's 20 s + 20 s waits on a busy
  // machine
  static final Duration ROLL_CAP = Duration.ofSeconds(28);

  /** When this worker was asked to stop ({@code System.nanoTime()}), 0 before. */
  private static volatile long stopRequestedNanos;

  static final int MAX_ATTEMPTS = 1000;

  /**
   * The per-type policy, registered by the workers and by the producer alike, so the cap a ticket
   * carries is the one its handler runs under.
   */
  static HandlerConfig policy(String type) {
    if (isLong(type)) {
      type = LONG_TYPE;
    }
    return switch (type) {
      case TYPE, HANG_TYPE ->
          HandlerConfig.builder()
              .maxAttempts(MAX_ATTEMPTS)
              .handlerTimeout(HANDLER_TIMEOUT)
              .backoff(
                  Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(500)).jitter(0.5))
              .build();
      case ORDERED_TYPE ->
          HandlerConfig.builder()
              .maxAttempts(MAX_ATTEMPTS)
              .handlerTimeout(HANDLER_TIMEOUT)
              .ordered(true)
              .backoff(
                  Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(500)).jitter(0.5))
              .build();
      case LONG_TYPE ->
          HandlerConfig.builder()
              .maxAttempts(MAX_ATTEMPTS)
              .concurrency(2)
              .handlerTimeout(LONG_HANDLER_TIMEOUT)
              .backoff(Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(500)))
              .build();
      default -> throw new IllegalArgumentException("no policy for " + type);
    };
  }

  private FaultWorker() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = parse(args);
    String replica = a.get("replica");
    boolean inboxOn = Boolean.parseBoolean(a.getOrDefault("inbox", "true"));
    long exhaustAfterMs = Long.parseLong(a.getOrDefault("exhaust-after-ms", "-1"));
    boolean onlyPinned = Boolean.parseBoolean(a.getOrDefault("only-pinned", "false"));
    HikariDataSource lmPool = pool(a.get("lm-url"), a.get("lm-user"), 12, replica + "-lm");
    HikariDataSource fxPool = pool(a.get("fx-url"), a.get("fx-user"), 12, replica + "-fx");
    // dialects named, not detected: a replacement may start while the database restarts
    Inbox inbox = Inbox.create(fxPool, "fx_inbox", dialectOf(a.get("fx-url")));
    Counters counters = new Counters();

    Duration lease = LEASE;
    LocalMessages lm =
        LocalMessages.builder(lmPool)
            .table(TABLE)
            .dialect(dialectOf(a.get("lm-url")))
            .replicaId(replica)
            .concurrency(8)
            .lease(lease)
            .writeBackMargin(WRITE_BACK_MARGIN)
            .pollInterval(Duration.ofMillis(50))
            .maintenanceInterval(Duration.ofMillis(500))
            .shutdownTimeout(SHUTDOWN_TIMEOUT)
            .listener(counters)
            .build();
    InFlight inFlight = new InFlight();
    Recorder rec = new Recorder(fxPool, replica, inFlight);
    io.localmessage.Handler applyHandler =
        m -> {
          long entered = System.currentTimeMillis();
          String key = m.idemKey();
          counters.deliveries.incrementAndGet();
          log(fxPool, key, replica, m.attempt(), "delivery");
          rec.run(
              m,
              entered,
              d -> {
                if (key.startsWith("perm-")) {
                  d.outcome = "perm";
                  throw new PermanentFailure("rejected by the suite (permanent by design)");
                }
                if (key.startsWith("nul-") && m.attempt() == 1) {
                  // an error text carrying U+0000, which PostgreSQL refuses in a text column
                  d.outcome = "nul-fail";
                  throw new IllegalStateException("injected failure with a nul \u0000 byte");
                }
                ThreadLocalRandom r = ThreadLocalRandom.current();
                // an ordered head that fails is retried while its successors wait
                if ((key.startsWith("fx-") || key.startsWith("ord-")) && r.nextInt(100) < 10) {
                  d.outcome = "fail-before";
                  throw new IllegalStateException("injected failure before applying");
                }
                boolean applied = apply(fxPool, inbox, inboxOn, key, replica, m.attempt());
                if (!applied) {
                  counters.inboxDuplicates.incrementAndGet();
                  log(fxPool, key, replica, m.attempt(), "duplicate");
                }
                if (applied && key.startsWith("hang-") && m.attempt() == 1) {
                  // applied, then hangs past the handler timeout IGNORING interrupts: no retry
                  // may start while this thread is still inside the handler
                  d.outcome = "hang-ignored";
                  hangIgnoringInterrupts(HANG_IGNORING.toMillis());
                  return; // the engine timed this delivery out: its outcome is a retry
                }
                if (applied && m.attempt() == 1 && Math.floorMod(key.hashCode(), 97) == 0) {
                  // applied, then hangs past the handler timeout and the lease: the engine
                  // interrupts it and another delivery follows, which only the inbox makes
                  // harmless
                  d.outcome = "hang-interrupted";
                  Thread.sleep(10_000);
                  return;
                }
                if (key.startsWith("fx-") && r.nextInt(100) < 5) {
                  d.outcome = "fail-after";
                  throw new IllegalStateException("injected failure after applying");
                }
                d.outcome = "ok";
              });
        };
    io.localmessage.Handler longHandler =
        m ->
            rec.run(
                m,
                d -> {
                  if (m.idemKey().startsWith("stall-")) {
                    // the held write-back phase: the first delivery ends at once (the suite
                    // holds its write-back in the network); the takeover works a while, so the
                    // stale write-back arrives while the new owner holds the ticket
                    apply(fxPool, inbox, inboxOn, m.idemKey(), replica, m.attempt());
                    if (m.attempt() > 1) {
                      d.outcome = "long-interrupted";
                      Thread.sleep(STALL_TAKEOVER.toMillis());
                    }
                    d.outcome = "ok";
                    return;
                  }
                  if (m.idemKey().startsWith("stubborn-")) {
                    // ignores the interrupt of a graceful stop and outlives its shutdown timeout,
                    // ending before its lease: no other delivery may start meanwhile
                    d.outcome = "stubborn-ok";
                    if (m.idemKey().startsWith("stubborn-roll-")) {
                      hangUntilAfterStop();
                    } else {
                      hangIgnoringInterrupts(STUBBORN.toMillis());
                    }
                    apply(fxPool, inbox, inboxOn, m.idemKey(), replica, m.attempt());
                    return;
                  }
                  // a legitimate handler that runs longer than the lease: the replica must keep
                  // its lease alive meanwhile; interruptible (a graceful stop interrupts it)
                  d.outcome = "long-interrupted";
                  Thread.sleep(
                      m.idemKey().startsWith("long-roll-")
                          ? ROLL_CAP.toMillis()
                          : LONG_HANDLER.toMillis());
                  d.outcome = "error";
                  apply(fxPool, inbox, inboxOn, m.idemKey(), replica, m.attempt());
                  d.outcome = "ok";
                });
    if (exhaustAfterMs >= 0) {
      // the replica whose pool is exhausted: its handlers do their own database work on the
      // engine's pool too, each holding a connection for its whole call, so they compete with the
      // engine's loops (the lease renewer keeps its own connection, issue 46)
      applyHandler = onEnginePool(applyHandler, lmPool, counters);
      longHandler = onEnginePool(longHandler, lmPool, counters);
    }
    if (!onlyPinned) {
      lm.register(TYPE, applyHandler, policy(TYPE));
      lm.register(HANG_TYPE, applyHandler, policy(HANG_TYPE));
      lm.register(ORDERED_TYPE, applyHandler, policy(ORDERED_TYPE));
      lm.register(LONG_TYPE, longHandler, policy(LONG_TYPE));
    }
    io.localmessage.Handler freezeHandler =
        m ->
            rec.run(
                m,
                d -> {
                  // the effect first (through the inbox), then the work the freeze interrupts
                  d.outcome = "error";
                  apply(fxPool, inbox, inboxOn, m.idemKey(), replica, m.attempt());
                  d.outcome = "long-interrupted";
                  Thread.sleep(FREEZE_HANDLER.toMillis());
                  d.outcome = "ok";
                });
    if (!onlyPinned) {
      lm.register(FREEZE_TYPE, freezeHandler, policy(FREEZE_TYPE));
    }
    // tickets pinned to this replica (and to the one it replaces): the suite knows which replica
    // runs them, so it can stop that one while they are in flight
    List<String> pinned = new ArrayList<>(List.of(replica));
    for (String other : a.getOrDefault("also-pinned", "").split(",")) {
      if (!other.isBlank()) {
        pinned.add(other);
      }
    }
    for (String r : pinned) {
      lm.register(pinnedType(r), longHandler, policy(pinnedType(r)));
    }
    String bootstrap = a.get("bootstrap");
    io.localmessage.kafka.KafkaRelay relay = null;
    if (bootstrap != null && !bootstrap.isBlank() && !onlyPinned) {
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
              // while the broker restarts every relay call blocks until its delivery timeout:
              // without a cap of its own the relay takes every slot of the replica and starves
              // the other types (observed: effect.apply stalled for a minute on a busy machine)
              .concurrency(2)
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
    stopRequestedNanos = System.nanoTime();
    long stopAt = System.currentTimeMillis();
    System.out.println("STOPPING " + replica + " in-flight=" + inFlight.count());
    lm.close();
    if (relay != null) {
      relay.close();
    }
    // a real process would exit here; this one waits until its handler threads have left, so the
    // record shows when each execution really ended (an engine that released the lease of a
    // handler still inside would show as an overlapping delivery)
    inFlight.awaitZero(Duration.ofSeconds(30));
    rec.close();
    System.out.println("CLOSED " + replica + " close-ms=" + (System.currentTimeMillis() - stopAt));
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
  /**
   * {@code handler} with a connection of the engine's own pool held for the whole call (a query on
   * it first): handler work that takes the pool's connections away from the engine's loops.
   */
  private static io.localmessage.Handler onEnginePool(
      io.localmessage.Handler handler, HikariDataSource lmPool, Counters counters) {
    return m -> {
      try (Connection own = lmPool.getConnection();
          java.sql.Statement st = own.createStatement()) {
        st.execute("SELECT 1");
        counters.handlersOnEnginePool.incrementAndGet();
        handler.handle(m);
      }
    };
  }

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
                      + " deliveries, inbox_duplicates, lease_reclaims, cas_conflicts, expired,"
                      + " fenced, write_back_dropped, lease_renewed, handlers_on_engine_pool)"
                      + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
        del.setString(1, replica);
        del.executeUpdate();
        ins.setString(1, replica);
        ins.setLong(2, c.deliveries.get());
        ins.setLong(3, c.inboxDuplicates.get());
        ins.setLong(4, c.leaseReclaims.get());
        ins.setLong(5, c.casConflicts.get());
        ins.setLong(6, c.expired.get());
        ins.setLong(7, c.fenced.get());
        ins.setLong(8, c.writeBackDropped.get());
        ins.setLong(9, c.leaseRenewed.get());
        ins.setLong(10, c.handlersOnEnginePool.get());
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
    c.setTransactionIsolation(serverDefaultIsolation(url));
    return new HikariDataSource(c);
  }

  /**
   * The server's default isolation, named, so the pool never detects it. With {@code
   * initializationFailTimeout(-1)} HikariCP detects the default isolation on its first connection
   * and, if that connection fails meanwhile (a pool started while the database restarts), keeps -1
   * and can never set up a connection again: "Transaction isolation level -1 not supported"
   * (HikariCP issue 1944). Seen here: a worker started during the database restart polled for 290 s
   * on a pool of 0 connections, and its pinned ticket was never run.
   */
  static String serverDefaultIsolation(String url) {
    return url.startsWith("jdbc:mysql") || url.startsWith("jdbc:mariadb")
        ? "TRANSACTION_REPEATABLE_READ"
        : "TRANSACTION_READ_COMMITTED";
  }

  private static io.localmessage.spi.Dialect dialectOf(String url) {
    return io.localmessage.spi.Dialects.named(
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
    final AtomicLong fenced = new AtomicLong();
    final AtomicLong writeBackDropped = new AtomicLong();
    final AtomicLong leaseRenewed = new AtomicLong();
    // handler calls that held a connection of the engine's pool (the pool-pressure replica)
    final AtomicLong handlersOnEnginePool = new AtomicLong();

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

    // no @Override: these callbacks exist only on engines that renew leases and fence executions

    public void fenced(String bizType, int count) {
      fenced.addAndGet(count);
    }

    public void writeBackDropped(String bizType, int count) {
      writeBackDropped.addAndGet(count);
    }

    public void leaseRenewed(String bizType, int count) {
      leaseRenewed.addAndGet(count);
    }
  }

  /** Sleeps {@code ms} even when interrupted, then restores the interrupt flag. */
  /** Ignoring interrupts: until {@link #STUBBORN_AFTER_STOP} after the stop, or the cap. */
  private static void hangUntilAfterStop() {
    long cap = System.nanoTime() + ROLL_CAP.toNanos();
    boolean interrupted = false;
    while (true) {
      long stop = stopRequestedNanos;
      long end = stop == 0 ? cap : Math.min(cap, stop + STUBBORN_AFTER_STOP.toNanos());
      long left = end - System.nanoTime();
      if (left <= 0) {
        break;
      }
      try {
        // wakes at least every 50 ms to see the stop
        Thread.sleep(Math.max(1, Math.min(50, left / 1_000_000)));
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private static void hangIgnoringInterrupts(long ms) {
    long end = System.nanoTime() + ms * 1_000_000;
    boolean interrupted = false;
    while (System.nanoTime() < end) {
      try {
        Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1_000_000));
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** What one delivery did; the handler body sets the outcome as it goes. */
  static final class Delivery {
    String outcome = "error";
  }

  interface Body {
    void run(Delivery d) throws Exception;
  }

  /** Handler threads currently inside a handler of this process. */
  static final class InFlight {
    private int count;

    synchronized void enter() {
      count++;
    }

    synchronized void leave() {
      count--;
      notifyAll();
    }

    synchronized int count() {
      return count;
    }

    synchronized void awaitZero(Duration max) throws InterruptedException {
      long end = System.nanoTime() + max.toNanos();
      while (count > 0 && System.nanoTime() < end) {
        wait(Math.max(1, (end - System.nanoTime()) / 1_000_000));
      }
    }
  }

  /**
   * Records every delivery in the effects database (fx_exec): a row when it starts and its end and
   * outcome when it leaves the handler, each committed on its own, independently of the effect, so
   * a rolled-back effect or a killed process still leaves the delivery on record.
   */
  static final class Recorder {
    private final HikariDataSource fx;
    private final String replica;
    private final InFlight inFlight;
    private final AtomicLong seq = new AtomicLong();
    private final java.util.concurrent.ExecutorService ends =
        java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "fx-record-end");
              t.setDaemon(true);
              return t;
            });

    Recorder(HikariDataSource fx, String replica, InFlight inFlight) {
      this.fx = fx;
      this.replica = replica;
      this.inFlight = inFlight;
    }

    void run(io.localmessage.Message m, Body body) throws Exception {
      run(m, System.currentTimeMillis(), body);
    }

    /** {@code entered}: when the handler was entered, before any I/O of the suite's own. */
    void run(io.localmessage.Message m, long entered, Body body) throws Exception {
      String nonce = replica + "-" + seq.incrementAndGet();
      try (Connection c = fx.getConnection();
          PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO fx_exec (nonce, idem_key, biz_type, replica, attempt,"
                      + " max_attempts, started_ms) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
        c.setAutoCommit(true);
        ps.setString(1, nonce);
        ps.setString(2, m.idemKey());
        ps.setString(3, m.bizType());
        ps.setString(4, replica);
        ps.setInt(5, m.attempt());
        ps.setInt(6, m.maxAttempts());
        ps.setLong(7, entered);
        ps.executeUpdate();
      }
      inFlight.enter();
      Delivery d = new Delivery();
      try {
        body.run(d);
      } finally {
        long end = System.currentTimeMillis();
        String outcome = d.outcome;
        // written after the handler has returned: an end record written inside the handler would
        // keep its thread there after the recorded end, and on a slow effects database the
        // engine would time out (and retry) a delivery the record shows as a quick "ok". Queued
        // before the delivery counts as left, so a graceful stop that waits for the deliveries
        // to leave and then for the queue loses none
        ends.execute(() -> finish(nonce, end, outcome));
        inFlight.leave();
      }
    }

    /** Waits for the end records still queued (a graceful stop). */
    void close() throws InterruptedException {
      ends.shutdown();
      if (!ends.awaitTermination(30, TimeUnit.SECONDS)) {
        System.out.println("RECORD_END_PENDING " + replica);
      }
    }

    private void finish(String nonce, long end, String outcome) {
      for (int i = 0; i < 5; i++) {
        try (Connection c = fx.getConnection();
            PreparedStatement ps =
                c.prepareStatement(
                    "UPDATE fx_exec SET ended_ms = ?, outcome = ? WHERE nonce = ?")) {
          c.setAutoCommit(true);
          ps.setLong(1, end);
          ps.setString(2, outcome);
          ps.setString(3, nonce);
          ps.executeUpdate();
          return;
        } catch (SQLException | RuntimeException e) {
          System.out.println("RECORD_END_FAILED " + nonce + " " + e);
        }
      }
    }
  }
}
