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
import java.util.concurrent.CopyOnWriteArrayList;
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
      boolean kafka,
      boolean phases) {}

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
      int consumerKills,
      int extraTickets,
      Phases phases,
      DeliveryAudit.Result audit) {

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
              seconds)
          + (phases == null ? "" : "\n  faults fired: " + phases.describe())
          + (audit == null ? "" : "\n  delivery record: " + audit.describe());
    }
  }

  /** One worker process and what the suite did to it (wall-clock ms, the workers' host). */
  static final class Worker {
    final String replica;
    final Process process;
    final long startedMs;
    volatile long killedMs = -1;
    volatile long frozenFromMs = -1;
    volatile long frozenToMs = -1;

    /** When the suite held this worker's write-back in the network (the held write-back phase). */
    volatile long heldFromMs = -1;

    volatile long heldToMs = -1;
    volatile long stopMs = -1;

    /** Its own way to the ticket database (null when the run has no scripted phases). */
    volatile TcpProxy proxy;

    /** Frozen or being stopped by a phase: not a victim for the random kills. */
    volatile boolean busy;

    final File log;
    private volatile boolean ready;

    Worker(String replica, Process process, File log) {
      this.replica = replica;
      this.process = process;
      this.log = log;
      this.startedMs = System.currentTimeMillis();
    }

    /** Whether it has started its engine (a slow start on a busy machine is not a kill target). */
    boolean ready() {
      if (!ready) {
        try {
          ready = java.nio.file.Files.readString(log.toPath()).contains("READY " + replica);
        } catch (IOException | java.io.UncheckedIOException e) {
          return false;
        }
      }
      return ready;
    }
  }

  /** What the scripted faults did, with counts, so a fault that never fired fails the run. */
  static final class Phases {
    /** Database outages (restart, proxy cut) as {from, to} in ms. */
    final List<long[]> outages = new CopyOnWriteArrayList<>();

    volatile int proxyCuts;
    volatile int proxyCutConnections;
    volatile long proxyOutageMs;
    volatile String frozenReplica;
    volatile int frozenInFlight = -1;
    volatile long frozenTakeovers = -1;
    volatile long frozenDropped = -1;
    volatile long freezeMs;
    volatile String heldReplica;
    volatile long heldMs = -1;
    volatile long heldCasConflicts = -1;
    volatile String heldStaleWriteApplied;
    final AtomicInteger gracefulStops = new AtomicInteger();
    final AtomicInteger gracefulStopsWithInFlight = new AtomicInteger();
    final AtomicInteger gracefulStopsWithLongInFlight = new AtomicInteger();
    final AtomicInteger gracefulStopsWithHandlerStillInside = new AtomicInteger();
    volatile int poisonRows;
    final AtomicInteger orderedSaved = new AtomicInteger();

    /**
     * Handler calls that held a connection of the engine's pool while it was exhausted around them
     * (-1: the pool-pressure replica never started).
     */
    volatile long handlersOnEnginePool = -1;

    /** Ordered saves that waited for another open transaction of their aggregate. */
    final AtomicInteger orderedSavesWaited = new AtomicInteger();

    final List<String> problems = new CopyOnWriteArrayList<>();

    String describe() {
      StringBuilder o = new StringBuilder();
      for (long[] w : outages) {
        o.append(w[1] - w[0]).append(" ms ");
      }
      return "outages: "
          + o
          + String.format(
              "| proxy outages=%d (%d ms, %d connections reset) | freeze of %s: %d ms, in flight=%d,"
                  + " taken over=%d, late outcomes dropped=%d | mid-run graceful stops=%d (with"
                  + " handlers in flight=%d, with a long handler in flight=%d, with a handler still"
                  + " inside after the shutdown timeout=%d) | held write-back of %s: %d ms, CAS"
                  + " conflicts=%d%s | poison rows=%d | ordered saved=%d (waited for another"
                  + " transaction of their aggregate=%d) | handler calls holding an engine"
                  + " connection on the exhausted replica=%d%s",
              proxyCuts,
              proxyOutageMs,
              proxyCutConnections,
              frozenReplica,
              freezeMs,
              frozenInFlight,
              frozenTakeovers,
              frozenDropped,
              gracefulStops.get(),
              gracefulStopsWithInFlight.get(),
              gracefulStopsWithLongInFlight.get(),
              gracefulStopsWithHandlerStillInside.get(),
              heldReplica,
              heldMs,
              heldCasConflicts,
              heldStaleWriteApplied == null
                  ? ""
                  : ", STALE WRITE APPLIED: " + heldStaleWriteApplied,
              poisonRows,
              orderedSaved.get(),
              orderedSavesWaited.get(),
              handlersOnEnginePool,
              problems.isEmpty() ? "" : " | problems: " + problems);
    }
  }

  static final int POISON_ROWS = 5;
  static final Duration PROXY_OUTAGE = Duration.ofSeconds(5);

  private final Plan plan;
  private final TestDatabase ticketsDb;
  private final TestDatabase effectsDb;
  private final DataSource tickets;
  private final DataSource effects;
  private final List<Worker> workers = new CopyOnWriteArrayList<>();
  private final AtomicInteger replicaSeq = new AtomicInteger();
  private final Random random = new Random(42);
  private final File logDir;
  private final AtomicInteger events = new AtomicInteger();
  private final AtomicInteger extraTickets = new AtomicInteger();
  private final Phases phases = new Phases();
  // a replica started with its pool to exhaust (its handlers work on the engine's pool)
  private volatile boolean pressureWorkerStarted;
  private BrokerProcess broker;
  private Process consumer;

  /** The ticket database's host and port, which each worker's proxy forwards to. */
  private String upstreamHost;

  private int upstreamPort;
  private volatile long outageUntilNanos;

  /**
   * Faults that break the workers' connections (the database restart, the proxy outage) and the
   * held write-back exclude each other: a connection reset while the statement is held would make
   * the worker send its write-back again on a new connection, within its lease, where it succeeds,
   * and the phase would have nothing to show. Guarded by itself.
   */
  private final Object connectionFaults = new Object();

  private boolean holdingWriteBack; // guarded by connectionFaults
  private boolean restarting; // guarded by connectionFaults

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
    Thread vacuum = null;
    if (ticketsDb.kind() == TestDatabase.Kind.POSTGRESQL) {
      vacuum = new Thread(this::vacuumLoop, "fault-vacuum");
      vacuum.setDaemon(true);
      vacuum.start();
    }
    try {
      return runChaos();
    } finally {
      if (vacuum != null) {
        vacuum.interrupt();
      }
      // whatever happened, leave no frozen, worker, consumer or broker process behind
      for (Worker w : workers) {
        signal(w.process, "CONT");
        w.process.destroyForcibly();
      }
      if (consumer != null) {
        consumer.destroyForcibly();
      }
      if (broker != null) {
        broker.close();
      }
      for (Worker w : workers) {
        if (w.proxy != null) {
          w.proxy.close();
        }
      }
    }
  }

  /**
   * Does on PostgreSQL what autovacuum does in production: the ticket table is a queue, every
   * delivery leaves a dead row, and the CI database runs with autovacuum off, so without this the
   * claims of a long run wade through hundreds of thousands of dead index entries (measured: a long
   * run drained at ~130 tickets/s with 470,000 dead rows, ~220/s right after one VACUUM).
   */
  private void vacuumLoop() {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        TimeUnit.SECONDS.sleep(20); // the cadence of an eager autovacuum, not synchronization
      } catch (InterruptedException e) {
        return;
      }
      try {
        exec(tickets, "VACUUM (ANALYZE) " + FaultWorker.TABLE);
      } catch (SQLException | RuntimeException e) {
        // the database may be restarting: the next round tries again
      }
    }
  }

  private long t0Millis;

  /** One line per scripted event with the time since the start, for the run's story. */
  private void note(String event) {
    System.out.printf(
        "[fault-suite +%.1fs] %s%n", (System.currentTimeMillis() - t0Millis) / 1000.0, event);
  }

  private Report runChaos() throws Exception {
    t0Millis = System.currentTimeMillis();
    prepareSchemas();
    if (plan.phases()) {
      java.util.regex.Matcher m =
          java.util.regex.Pattern.compile("//([^/:]+):(\\d+)/").matcher(ticketsDb.jdbcUrl());
      if (!m.find()) {
        throw new IllegalStateException("no host:port in " + ticketsDb.jdbcUrl());
      }
      upstreamHost = m.group(1);
      upstreamPort = Integer.parseInt(m.group(2));
    }
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
    Thread producer =
        new Thread(
            () -> {
              // with the phases: two producers of ordered tickets beside the main one, paced by
              // it, so their deliveries meet the kills, the freeze and the outages
              List<Thread> ordered = new ArrayList<>();
              for (int p = 0; plan.phases() && p < 2; p++) {
                int producerNo = p;
                Thread t =
                    new Thread(
                        () -> produceOrdered(producerNo, saved), "fault-ordered-producer-" + p);
                t.start();
                ordered.add(t);
              }
              produce(saved, permanent);
              for (Thread t : ordered) {
                try {
                  t.join();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  return;
                }
              }
            },
            "fault-producer");
    producer.start();

    int kills = 0;
    int brokerKills = 0;
    int consumerKills = 0;
    long downtime = 0;
    boolean restarted = false;
    boolean exhausted = false;
    boolean poisoned = false;
    boolean cut = false;
    Thread freeze = null;
    Thread held = null;
    Thread rolling = null;
    long killEveryNanos = plan.killEvery().toNanos();
    long nextKill = System.nanoTime() + killEveryNanos;
    long deadline = System.nanoTime() + plan.deadline().toNanos();
    long nextPendingNote = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    long lastEventDistinct = 0;
    while (producer.isAlive()
        || pending() > 0
        || alive(freeze)
        || alive(held)
        || alive(rolling)
        // a connection fault deferred by the held write-back still fires, after it
        || (plan.restartDatabase() && !restarted)
        || (plan.phases() && !cut)) {
      if (System.nanoTime() > deadline) {
        break;
      }
      double progress = saved.get() / (double) plan.tickets();
      if ((producer.isAlive() || kills < 3) && System.nanoTime() >= nextKill) {
        if (killRandomWorker()) {
          kills++;
          startWorker(!exhausted && progress > 0.5 ? 500 : -1);
          exhausted |= progress > 0.5;
        }
        nextKill = System.nanoTime() + killEveryNanos;
      }
      if (plan.kafka() && brokerKills == 0 && progress > 0.55) {
        broker.kill(); // SIGKILL: in-flight sends fail, tickets stay PENDING and retry
        brokerKills++;
        waitQuietly(Duration.ofSeconds(3));
        broker.start();
      }
      // the consumer is killed while it is busy applying events (not idle between batches), so
      // records it applied but whose offsets it had not committed come again: the inbox's job
      if (plan.kafka() && consumerKills == 0 && progress > 0.7 && consumerBusy(lastEventDistinct)) {
        consumer.destroyForcibly();
        consumer.waitFor(10, TimeUnit.SECONDS);
        consumerKills++;
        startConsumer();
      }
      if (plan.restartDatabase() && !restarted && progress > 0.35 && startConnectionFault()) {
        long from = System.currentTimeMillis();
        note("database restart");
        try {
          downtime = DatabaseRestart.restart(ticketsDb.kind());
        } finally {
          synchronized (connectionFaults) {
            restarting = false;
          }
        }
        note("database back after " + downtime + " ms");
        phases.outages.add(new long[] {from, System.currentTimeMillis()});
        restarted = true;
      }
      if (plan.phases()) {
        if (freeze == null && progress > 0.1) {
          freeze = phase("fault-freeze", this::freezePhase);
        }
        if (held == null && progress > 0.05) {
          held = phase("fault-held-write-back", this::heldWriteBackPhase);
        }
        if (!poisoned && progress > 0.3) {
          insertPoisonRows();
          poisoned = true;
        }
        if (!cut && progress > 0.45 && startConnectionFault()) {
          // the ticket database is away for the workers (not the producer), shorter than the
          // lease minus the write-back margin, while they write back at full speed
          note("proxy outage of " + PROXY_OUTAGE.toMillis() + " ms");
          long from = System.currentTimeMillis();
          synchronized (connectionFaults) {
            restarting = false; // the outage is timed by its end, below
            outageUntilNanos = System.nanoTime() + PROXY_OUTAGE.toNanos();
          }
          for (Worker w : workers) {
            if (w.proxy != null) {
              phases.proxyCutConnections += w.proxy.cut(PROXY_OUTAGE);
            }
          }
          phases.proxyCuts++;
          phases.proxyOutageMs += PROXY_OUTAGE.toMillis();
          phases.outages.add(new long[] {from, from + PROXY_OUTAGE.toMillis()});
          cut = true;
        }
        // after the kills: the rolling restart protects every worker it will stop, and their
        // successors, from random kills
        if (rolling == null
            && progress > 0.6
            && kills >= 3
            && freeze != null
            && !freeze.isAlive()) {
          rolling = phase("fault-rolling-restart", this::rollingRestartPhase);
        }
      }
      if (System.nanoTime() >= nextPendingNote) {
        note("pending by type: " + pendingByType());
        nextPendingNote = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      }
      lastEventDistinct = plan.kafka() ? eventDistinct() : 0;
      waitQuietly(Duration.ofMillis(200));
    }
    long left = pending();
    note("chaos over, pending=" + left);
    if (left > 0) {
      for (Worker w : workers) {
        if (w.process.isAlive()) {
          threadDump(w, "the run ends with " + left + " tickets pending");
        }
      }
    }
    producer.join(TimeUnit.MINUTES.toMillis(1));
    joinPhase(freeze);
    joinPhase(held);
    joinPhase(rolling);
    while (plan.kafka() && System.nanoTime() < deadline && eventDistinct() < events.get()) {
      if (!consumer.isAlive()) {
        throw new IllegalStateException(
            "the consumer process died: see target/faults/consumer.log");
      }
      waitQuietly(Duration.ofMillis(200)); // the consumer catches up after the relay drained
    }
    note("stopping the workers");
    stopWorkers();
    note("workers stopped");
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

  private interface PhaseBody {
    void run() throws Exception;
  }

  private Thread phase(String name, PhaseBody body) {
    Thread t =
        new Thread(
            () -> {
              try {
                body.run();
              } catch (Exception | AssertionError e) {
                phases.problems.add(name + ": " + e);
              }
            },
            name);
    t.start();
    return t;
  }

  private static boolean alive(Thread t) {
    return t != null && t.isAlive();
  }

  private static void joinPhase(Thread t) throws InterruptedException {
    if (t != null) {
      t.join(TimeUnit.MINUTES.toMillis(3));
    }
  }

  /**
   * Freezes (SIGSTOP) a worker that holds tickets until other replicas took them over, then resumes
   * it: its late outcomes must all be dropped by the version check.
   */
  private void freezePhase() throws Exception {
    // the freeze handler works for less than the lease (FaultWorker.FREEZE_HANDLER): frozen
    // while it works, the replica holds the lease until it runs out, another replica takes the
    // ticket over, and on resume the handler returns at once with a late outcome for the writer
    Worker w = null;
    String key = null;
    long droppedBefore = 0;
    long from = 0;
    for (int tries = 0; w == null && tries < 10; tries++) {
      key = "long-freeze-" + tries;
      saveTickets(FaultWorker.FREEZE_TYPE, List.of(key));
      String holder = null;
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (holder == null && System.nanoTime() < until) {
        holder = holderOf(key);
        if (holder == null) {
          waitQuietly(Duration.ofMillis(50));
        }
      }
      Worker candidate = null;
      for (Worker c : workers) {
        if (c.replica.equals(holder) && !c.busy && c.process.isAlive() && c.killedMs < 0) {
          candidate = c;
        }
      }
      if (candidate == null) {
        continue;
      }
      candidate.busy = true;
      droppedBefore = droppedOutcomes(candidate.replica);
      from = System.currentTimeMillis();
      candidate.frozenFromMs = from;
      signal(candidate.process, "STOP");
      if (!candidate.replica.equals(holderOf(key))) {
        // the handler finished before the freeze: nothing is held, try another ticket
        signal(candidate.process, "CONT");
        candidate.frozenFromMs = -1;
        candidate.busy = false;
        note("missed the freeze of " + key + ", trying again");
        continue;
      }
      w = candidate;
    }
    if (w == null) {
      throw new IllegalStateException("no worker took a long ticket to freeze it with");
    }
    phases.frozenReplica = w.replica;
    note("froze " + w.replica + " holding " + key);
    phases.frozenInFlight = inFlightAt(w.replica, from);
    try {
      // frozen until another replica took the long ticket over (its lease ran out), bounded
      long end = System.nanoTime() + FaultWorker.LEASE.multipliedBy(4).toNanos();
      while (System.nanoTime() < end && takeoversOf(w.replica, key) < 1) {
        waitQuietly(Duration.ofMillis(100));
      }
    } finally {
      signal(w.process, "CONT");
      w.frozenToMs = System.currentTimeMillis();
    }
    phases.freezeMs = w.frozenToMs - from;
    note("resumed " + w.replica);
    phases.frozenTakeovers = takeoversOf(w.replica, null);
    // the resumed worker finishes what it held; every such outcome is stale
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < end && droppedOutcomes(w.replica) <= droppedBefore) {
      waitQuietly(Duration.ofMillis(100));
    }
    phases.frozenDropped = droppedOutcomes(w.replica) - droppedBefore;
    note("frozen replica dropped " + phases.frozenDropped + " late outcomes");
    w.busy = false;
  }

  /**
   * Whether a fault that breaks connections may start now (not while a write-back is held); marks
   * it as running until its caller says it ended.
   */
  private boolean startConnectionFault() {
    synchronized (connectionFaults) {
      if (holdingWriteBack) {
        return false;
      }
      restarting = true;
      return true;
    }
  }

  /**
   * Waits (bounded) until no connection-breaking fault runs or has just ended, then marks the
   * write-back hold as started, so none starts until {@link #endHold()}.
   */
  private void beginHold() {
    long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (System.nanoTime() < end) {
      synchronized (connectionFaults) {
        // a second after an outage, so the pools have their connections back
        if (!restarting && System.nanoTime() - outageUntilNanos > TimeUnit.SECONDS.toNanos(1)) {
          holdingWriteBack = true;
          return;
        }
      }
      waitQuietly(Duration.ofMillis(100));
    }
    throw new IllegalStateException("a connection fault did not end within 3 minutes");
  }

  private void endHold() {
    synchronized (connectionFaults) {
      holdingWriteBack = false;
    }
  }

  /**
   * The write-back statements of the dialects (PostgreSQL, MySQL/MariaDB) as the server receives
   * them: the held write-back phase holds the first one a worker sends.
   */
  static final List<String> WRITE_BACK_MARKERS =
      List.of(
          "DELETE FROM " + FaultWorker.TABLE + " t USING unnest",
          "DELETE FROM " + FaultWorker.TABLE + " WHERE id IN (");

  /**
   * A stale write-back that reaches the database. An idle replica runs one ticket, and its
   * write-back is held in the network (sent by the replica, not yet seen by the server) past the
   * lease, with everything the replica sends after it: a partition that begins just after the
   * write-back left. A replica that can still renew keeps the lease of a run whose outcome is on
   * its way (design 8.20), so only one that cannot loses it. Its successor takes the ticket over
   * and works on it; then the held statement arrives. The version check must refuse it: a CAS
   * conflict on the replica, and the ticket stays with its new owner. A freeze cannot show this
   * deterministically: a resumed engine drops its stale outcomes before they reach the database (it
   * knows its lease end, and a failed renewal fences), so only a delay between the replica and the
   * server puts the version check to work.
   */
  private void heldWriteBackPhase() throws Exception {
    Worker s = startWorker(-1, "", true);
    s.busy = true;
    long ready = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!s.ready() && s.process.isAlive() && System.nanoTime() < ready) {
      waitQuietly(Duration.ofMillis(100));
    }
    if (!s.ready()) {
      throw new IllegalStateException(s.replica + " never started");
    }
    String key = "stall-" + s.replica;
    beginHold();
    try {
      holdOneWriteBack(s, key);
    } finally {
      endHold();
    }
  }

  private void holdOneWriteBack(Worker s, String key) throws Exception {
    long casBefore = casConflicts(s.replica);
    s.proxy.holdNext(WRITE_BACK_MARKERS);
    saveTickets(FaultWorker.pinnedType(s.replica), List.of(key));
    if (!s.proxy.awaitHolding(Duration.ofSeconds(30))) {
      s.proxy.release();
      String problem = "the write-back of " + key + " was never sent (" + ticketState(key) + ")";
      threadDump(s, problem);
      throw new IllegalStateException(problem + ", see " + s.log);
    }
    s.heldFromMs = System.currentTimeMillis();
    phases.heldReplica = s.replica;
    note("holding the write-back of " + s.replica + " for " + key);
    // its successor registers the pinned type: it takes the ticket over when the lease ran out
    Worker successor = startWorker(-1, s.replica, false);
    successor.busy = true;
    try {
      long end = System.nanoTime() + FaultWorker.LEASE.multipliedBy(6).toNanos();
      while (System.nanoTime() < end && !takeoverDeliveryInside(key)) {
        waitQuietly(Duration.ofMillis(50));
      }
      if (!takeoverDeliveryInside(key)) {
        throw new IllegalStateException(
            "nobody took " + key + " over while its write-back waited (" + ticketState(key) + ")");
      }
    } finally {
      s.proxy.release();
      s.heldToMs = System.currentTimeMillis();
    }
    phases.heldMs = s.heldToMs - s.heldFromMs;
    note("released the held write-back of " + s.replica);
    // while the new owner works, its ticket must stay: a stale write-back applied would delete it
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (System.nanoTime() < end && casConflicts(s.replica) <= casBefore) {
      if (takeoverDeliveryInside(key) && !ticketExists(key)) {
        phases.heldStaleWriteApplied = key + " deleted while its new owner still ran it";
        break;
      }
      waitQuietly(Duration.ofMillis(20));
    }
    phases.heldCasConflicts = casConflicts(s.replica) - casBefore;
    note("the held write-back of " + s.replica + ": CAS conflicts=" + phases.heldCasConflicts);
    successor.busy = false;
  }

  /** Whether a delivery of {@code key} after the first is inside its handler now. */
  private boolean takeoverDeliveryInside(String key) {
    return count(
            effects,
            "SELECT COUNT(*) FROM fx_exec WHERE idem_key = ? AND attempt > 1 AND ended_ms IS NULL",
            key)
        > 0;
  }

  /** For a failure message: the ticket's row as the database has it now. */
  private String ticketState(String key) {
    try {
      return Sql.string(
          tickets,
          "SELECT CONCAT('status=', status, ' attempts=', attempts, ' version=', version,"
              + " ' owner=', COALESCE(lease_owner, '-')) FROM "
              + FaultWorker.TABLE
              + " WHERE idem_key = ?",
          key);
    } catch (RuntimeException e) {
      return "row not readable: " + e;
    }
  }

  private boolean ticketExists(String key) {
    return count(tickets, "SELECT COUNT(*) FROM " + FaultWorker.TABLE + " WHERE idem_key = ?", key)
        > 0;
  }

  private long casConflicts(String replica) {
    return count(
        effects,
        "SELECT COALESCE(SUM(cas_conflicts), 0) FROM fx_worker_stats WHERE replica = ?",
        replica);
  }

  /**
   * Restarts every worker gracefully, one after the other, in the middle of the run, each while it
   * runs a long handler that a stop interrupts and a stubborn one that ignores the interrupt and
   * outlives the shutdown timeout (still under its lease).
   */
  private void rollingRestartPhase() throws Exception {
    List<Worker> todo =
        new ArrayList<>(
            workers.stream()
                .filter(w -> w.process.isAlive() && w.killedMs < 0 && !w.busy)
                .toList());
    // no random kill from here: each needs to be stopped, and its pinned tickets need it or its
    // successor
    todo.forEach(w -> w.busy = true);
    for (Worker pick : todo) {
      long ready = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!pick.ready() && pick.process.isAlive() && System.nanoTime() < ready) {
        waitQuietly(Duration.ofMillis(100)); // a replacement still starting on a busy machine
      }
      if (!pick.process.isAlive() || pick.killedMs >= 0 || !pick.ready()) {
        phases.problems.add(pick.replica + " never started, so it was not restarted");
        continue;
      }
      // a long handler a stop interrupts, and a stubborn one that outlives the shutdown timeout,
      // both pinned to this replica so they are in flight on it when it stops; both wait for the
      // stop (FaultWorker.STUBBORN_AFTER_STOP), however long the successor below takes to start
      String type = FaultWorker.pinnedType(pick.replica);
      String stubborn = "stubborn-roll-" + pick.replica;
      String interruptible = "long-roll-" + pick.replica;
      saveTickets(type, List.of(interruptible, stubborn));
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (System.nanoTime() < until
          && !(pick.replica.equals(holderOf(stubborn))
              && pick.replica.equals(holderOf(interruptible)))) {
        waitQuietly(Duration.ofMillis(50));
      }
      // its successor registers the pinned type, to finish what the stop gave back or kept; it
      // is never a kill target, or the pinned tickets would wait for a replica that never comes.
      // It is started and polling before the stop (the pinned tickets are leased by the live
      // replica meanwhile), as in a rolling deploy that surges: a stop that let go of the lease of
      // a handler still inside is then claimed at once and shows as an overlapping delivery,
      // however long a JVM takes to start on a busy machine
      Worker successor = startWorker(-1, pick.replica, false);
      successor.busy = true;
      long up = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!successor.ready() && successor.process.isAlive() && System.nanoTime() < up) {
        waitQuietly(Duration.ofMillis(100));
      }
      if (!successor.ready()) {
        // not a failure: the stop still happens, it only checks less (the suite asserts that
        // some stop had a handler inside past the shutdown timeout)
        note(successor.replica + ", the successor of " + pick.replica + ", was not up in 20 s");
      }
      note("graceful stop of " + pick.replica);
      long stopAt = System.currentTimeMillis();
      pick.stopMs = stopAt;
      try {
        pick.process.getOutputStream().close(); // graceful: the worker closes its engine
      } catch (IOException ignored) {
        // already gone
      }
      if (!pick.process.waitFor(60, TimeUnit.SECONDS)) {
        phases.problems.add(pick.replica + " did not stop within 60 s");
        pick.process.destroyForcibly();
      }
      phases.gracefulStops.incrementAndGet();
      if (inFlightAt(pick.replica, stopAt) > 0) {
        phases.gracefulStopsWithInFlight.incrementAndGet();
      }
      if (longInFlightAt(pick.replica, stopAt) > 0) {
        phases.gracefulStopsWithLongInFlight.incrementAndGet();
      }
      if (stillInsideAfter(pick.replica, stopAt) > 0) {
        phases.gracefulStopsWithHandlerStillInside.incrementAndGet();
      }
    }
  }

  private String holderOf(String key) {
    try {
      return Sql.string(
          effects, "SELECT MIN(replica) FROM fx_exec WHERE idem_key = ? AND ended_ms IS NULL", key);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Deliveries of a stopped replica still inside the handler after the shutdown timeout. */
  private long stillInsideAfter(String replica, long stopAt) {
    long after = stopAt + FaultWorker.SHUTDOWN_TIMEOUT.toMillis() + 1_000;
    return count(
        effects,
        "SELECT COUNT(*) FROM fx_exec WHERE replica = ? AND started_ms <= ? AND ended_ms > ?",
        replica,
        stopAt,
        after);
  }

  /**
   * Appends a thread dump of a worker to its log ({@code jcmd Thread.print} of the JDK running the
   * suite), so a replica that stopped doing its work can be read after the run, and prints its
   * engine threads in the run's output (CI keeps that, not target/). Best effort, bounded: a frozen
   * worker does not answer, and then there is no dump after 20 s.
   */
  private void threadDump(Worker w, String why) {
    try {
      java.nio.file.Path out = java.nio.file.Files.createTempFile(logDir.toPath(), "dump-", ".txt");
      try {
        Process p =
            new ProcessBuilder(
                    new File(System.getProperty("java.home"), "bin/jcmd").getPath(),
                    Long.toString(w.process.pid()),
                    "Thread.print")
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
          p.destroyForcibly();
          note("no thread dump of " + w.replica + " within 20 s (" + why + ")");
          return;
        }
        String dump = java.nio.file.Files.readString(out);
        java.nio.file.Files.writeString(
            w.log.toPath(),
            "THREAD DUMP (" + why + ")\n" + dump,
            java.nio.file.StandardOpenOption.APPEND);
        StringBuilder engine = new StringBuilder();
        for (String block : dump.split("\n\\s*\n")) {
          if (block.startsWith("\"lm-")) {
            engine.append(block).append('\n');
          }
        }
        note("thread dump of " + w.replica + " (" + why + "), its engine threads:\n" + engine);
      } finally {
        java.nio.file.Files.deleteIfExists(out);
      }
    } catch (IOException | RuntimeException e) {
      note("no thread dump of " + w.replica + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void saveTickets(String type, List<String> keys) throws SQLException {
    LocalMessages saver = saver();
    if (!type.equals(FaultWorker.LONG_TYPE)) {
      saver.register(type, m -> {}, FaultWorker.policy(type));
    }
    try (Connection c = tickets.getConnection()) {
      c.setAutoCommit(false);
      for (String key : keys) {
        saver.save(c, NewMessage.action(type, key).aggregateId(key).payload("{}").build());
      }
      c.commit();
    }
    extraTickets.addAndGet(keys.size());
  }

  /** Rows the engine cannot decode, inserted behind its back: each must go DEAD with a reason. */
  private void insertPoisonRows() {
    String now =
        ticketsDb.kind() == TestDatabase.Kind.MARIADB ? "UTC_TIMESTAMP(3)" : "CURRENT_TIMESTAMP";
    for (int i = 0; i < POISON_ROWS; i++) {
      Sql.update(
          tickets,
          "INSERT INTO "
              + FaultWorker.TABLE
              + " (kind, biz_type, idem_key, headers, status, attempts, max_attempts,"
              + " next_retry_at, version, created_at, updated_at)"
              + " VALUES (1, ?, ?, ?, 0, 0, ?, "
              + now
              + ", 0, "
              + now
              + ", "
              + now
              + ")",
          FaultWorker.TYPE,
          "poison-" + i,
          i % 2 == 0 ? "not json" : "{\"unterminated",
          FaultWorker.MAX_ATTEMPTS);
    }
    phases.poisonRows = POISON_ROWS;
  }

  /** Counts for the scripted phases, which run while the database may be restarting. */
  private static long count(DataSource ds, String sql, Object... args) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (true) {
      try {
        return Sql.count(ds, sql, args);
      } catch (RuntimeException e) {
        if (System.nanoTime() > until) {
          throw e;
        }
        waitQuietly(Duration.ofMillis(200));
      }
    }
  }

  private long inFlight(String replica) {
    return count(
        effects, "SELECT COUNT(*) FROM fx_exec WHERE replica = ? AND ended_ms IS NULL", replica);
  }

  private int inFlightAt(String replica, long at) {
    return (int)
        count(
            effects,
            "SELECT COUNT(*) FROM fx_exec WHERE replica = ? AND started_ms <= ?"
                + " AND (ended_ms IS NULL OR ended_ms >= ?)",
            replica,
            at,
            at);
  }

  private int longInFlightAt(String replica, long at) {
    return (int)
        count(
            effects,
            "SELECT COUNT(*) FROM fx_exec WHERE replica = ? AND biz_type NOT IN (?, ?)"
                + " AND started_ms <= ? AND (ended_ms IS NULL OR ended_ms >= ?)",
            replica,
            FaultWorker.TYPE,
            FaultWorker.HANG_TYPE,
            at,
            at);
  }

  private long takeoversOf(String replica, String key) {
    return key == null
        ? count(tickets, "SELECT COUNT(*) FROM lm_claims WHERE old_owner = ?", replica)
        : count(
            tickets,
            "SELECT COUNT(*) FROM lm_claims WHERE old_owner = ? AND idem_key = ?",
            replica,
            key);
  }

  /** Outcomes a replica dropped as stale: CAS conflicts, fenced executions, expired write-backs. */
  private long droppedOutcomes(String replica) {
    return count(
        effects,
        "SELECT COALESCE(SUM(cas_conflicts + fenced + write_back_dropped), 0)"
            + " FROM fx_worker_stats WHERE replica = ?",
        replica);
  }

  /** SIGSTOP / SIGCONT through kill(1): Process offers only SIGTERM and SIGKILL. */
  static void signal(Process p, String sig) {
    if (!p.isAlive()) {
      return;
    }
    try {
      Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).start();
      if (!k.waitFor(10, TimeUnit.SECONDS)) {
        k.destroyForcibly();
      }
    } catch (IOException e) {
      throw new IllegalStateException("kill -" + sig + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
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
    boolean fxMaria = effectsDb.kind() == TestDatabase.Kind.MARIADB;
    exec(
        effects,
        "CREATE TABLE fx_effect (id BIGINT NOT NULL"
            + (fxMaria ? " AUTO_INCREMENT" : " GENERATED BY DEFAULT AS IDENTITY")
            + " PRIMARY KEY, idem_key VARCHAR(128) NOT NULL, replica VARCHAR(64), attempt INT)");
    exec(effects, "CREATE TABLE fx_event_effect (event_key VARCHAR(128) NOT NULL)");
    exec(
        effects,
        "CREATE TABLE fx_delivery (idem_key VARCHAR(128) NOT NULL,"
            + " replica VARCHAR(64), attempt INT, what VARCHAR(16))");
    exec(
        effects,
        "CREATE TABLE fx_exec (nonce VARCHAR(64) PRIMARY KEY, idem_key VARCHAR(128) NOT NULL,"
            + " biz_type VARCHAR(64) NOT NULL, replica VARCHAR(64) NOT NULL, attempt INT NOT NULL,"
            + " max_attempts INT NOT NULL, started_ms BIGINT NOT NULL, ended_ms BIGINT,"
            + " outcome VARCHAR(24))");
    exec(effects, "CREATE INDEX ix_fx_exec_replica ON fx_exec (replica, ended_ms)");
    exec(
        effects,
        "CREATE TABLE fx_worker_stats (replica VARCHAR(64) PRIMARY KEY,"
            + " deliveries BIGINT, inbox_duplicates BIGINT, lease_reclaims BIGINT,"
            + " cas_conflicts BIGINT, expired BIGINT, fenced BIGINT, write_back_dropped BIGINT,"
            + " lease_renewed BIGINT, handlers_on_engine_pool BIGINT)");
    createClaimLog(tickets, ticketsDb);
  }

  /**
   * Every claim of a ticket of {@link FaultWorker#TABLE}, logged by a trigger on it (a claim is the
   * one update that bumps the version, sets a lease owner and moves the lease end): who held it
   * before, whether its lease was still live, and the attempts before and after.
   *
   * <p>The time logged is the clock the claim itself read: {@code statement_timestamp()} on
   * PostgreSQL, not {@code now()}. {@code now()} is the transaction's start, taken when the
   * driver's Parse message arrives; the claim's clock is read at Bind/Execute, after planning, so
   * even an autocommit claim runs a few milliseconds after its {@code now()} (3.5 ms here on a
   * quiet machine, more on a loaded one), and a lease that ended in between would look live. On
   * MariaDB the two-statement claim takes its rows by the time of its SELECT and the trigger reads
   * the later UPDATE's, which cannot make an ended lease look live.
   */
  static void createClaimLog(DataSource tickets, TestDatabase ticketsDb) throws SQLException {
    boolean maria = ticketsDb.kind() == TestDatabase.Kind.MARIADB;
    exec(
        tickets,
        "CREATE TABLE lm_claims (ticket_id BIGINT NOT NULL, biz_type VARCHAR(64),"
            + " idem_key VARCHAR(128), old_owner VARCHAR(64), new_owner VARCHAR(64),"
            + " old_attempts INT, new_attempts INT, max_attempts INT, at_ms BIGINT,"
            + " old_lease_end_ms BIGINT)");
    String cols =
        "INSERT INTO %slm_claims (ticket_id, biz_type, idem_key, old_owner, new_owner,"
            + " old_attempts, new_attempts, max_attempts, at_ms, old_lease_end_ms) VALUES"
            + " (NEW.id, NEW.biz_type, NEW.idem_key, OLD.lease_owner, NEW.lease_owner,"
            + " OLD.attempts, NEW.attempts, NEW.max_attempts, %s, %s)";
    // a shutdown that keeps the lease of a handler still inside also bumps the version and keeps
    // the owner, but leaves the lease end as it was: only a claim moves it
    String when =
        "NEW.lease_owner IS NOT NULL AND NEW.version > OLD.version AND NEW.status = 0"
            + " AND NEW.next_retry_at <> OLD.next_retry_at";
    if (maria) {
      exec(
          tickets,
          "CREATE TRIGGER lm_claim_log AFTER UPDATE ON "
              + FaultWorker.TABLE
              + " FOR EACH ROW BEGIN IF "
              + when
              + " THEN "
              + String.format(
                  cols,
                  "",
                  "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000",
                  "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', OLD.next_retry_at) DIV 1000")
              + "; END IF; END");
    } else {
      String schema = ticketsDb.name() + ".";
      exec(
          tickets,
          "CREATE FUNCTION "
              + schema
              + "lm_claim_log() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF "
              + when
              + " THEN "
              + String.format(
                  cols,
                  schema,
                  "(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::bigint",
                  "(EXTRACT(EPOCH FROM OLD.next_retry_at) * 1000)::bigint")
              + "; END IF; RETURN NEW; END $$");
      exec(
          tickets,
          "CREATE TRIGGER lm_claim_log AFTER UPDATE ON "
              + FaultWorker.TABLE
              + " FOR EACH ROW EXECUTE FUNCTION "
              + schema
              + "lm_claim_log()");
    }
  }

  private static void exec(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /** The producer's engine registers the workers' policies: a ticket carries its type's cap. */
  private LocalMessages saver() {
    LocalMessages saver = LocalMessages.builder(tickets).table(FaultWorker.TABLE).build();
    saver.register(FaultWorker.TYPE, m -> {}, FaultWorker.policy(FaultWorker.TYPE));
    saver.register(FaultWorker.HANG_TYPE, m -> {}, FaultWorker.policy(FaultWorker.HANG_TYPE));
    saver.register(FaultWorker.ORDERED_TYPE, m -> {}, FaultWorker.policy(FaultWorker.ORDERED_TYPE));
    saver.register(FaultWorker.LONG_TYPE, m -> {}, FaultWorker.policy(FaultWorker.LONG_TYPE));
    return saver;
  }

  /** The kind of ticket number {@code k}: permanent, long, hanging, nul-error or plain. */
  static String keyOf(int k) {
    if (k % 100 == 99) {
      return "perm-" + k;
    }
    if (k % 1000 == 500) {
      return "long-" + k;
    }
    if (k % 1000 == 7) {
      return "hang-" + k;
    }
    if (k % 500 == 13) {
      return "nul-" + k;
    }
    return "fx-" + k;
  }

  /** Saves every ticket with its order in one transaction, surviving the database restart. */
  private void produce(AtomicLong saved, AtomicInteger permanent) {
    LocalMessages saver = saver();
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
          String key = plan.phases() ? keyOf(k) : (k % 100 == 99 ? "perm-" : "fx-") + k;
          boolean isPermanent = key.startsWith("perm-");
          perm += isPermanent ? 1 : 0;
          saver.save(
              c,
              NewMessage.action(
                      key.startsWith("long-")
                          ? FaultWorker.LONG_TYPE
                          : key.startsWith("hang-") ? FaultWorker.HANG_TYPE : FaultWorker.TYPE,
                      key)
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
        if (i == 0 || batchEnd == plan.tickets()) {
          note("producer saved " + batchEnd);
        }
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

  static final int ORDERED_AGGREGATES = 40;
  static final int ORDERED_ROUNDS = 10;

  /** Meets the two ordered producers at each aggregate, so their transactions overlap there. */
  private final java.util.concurrent.CyclicBarrier orderedMeet =
      new java.util.concurrent.CyclicBarrier(2);

  /**
   * Saves ordered tickets, one per aggregate and round, each in a transaction of its own that stays
   * open up to 50 ms after the save (1 to 2 s at four aggregates a round). The two producers meet
   * before each aggregate and save into it at the same moment: one save waits for the other's
   * transaction (the save locks the aggregate), so their commit order is the order to deliver in.
   * Without that lock the later id may commit first and run before the earlier one becomes visible,
   * which the audit counts. Round {@code n} starts once the main producer is {@code n} tenths
   * through.
   */
  private void produceOrdered(int producer, AtomicLong saved) {
    LocalMessages saver = saver();
    Random r = new Random(producer);
    for (int round = 0; round < ORDERED_ROUNDS; round++) {
      long pace = (long) plan.tickets() * round / ORDERED_ROUNDS;
      while (saved.get() < pace) {
        waitQuietly(Duration.ofMillis(50));
      }
      for (int a = 0; a < ORDERED_AGGREGATES; a++) {
        String key = "ord-a" + a + "-" + producer + "-" + round;
        meetTheOtherProducer();
        while (true) {
          try (Connection c = tickets.getConnection()) {
            c.setAutoCommit(false);
            long before = System.nanoTime();
            saver.save(
                c,
                NewMessage.action(FaultWorker.ORDERED_TYPE, key)
                    .aggregateId("a" + a)
                    .payload("{}")
                    .build());
            if (System.nanoTime() - before > TimeUnit.MILLISECONDS.toNanos(3)) {
              phases.orderedSavesWaited.incrementAndGet();
            }
            // a business transaction's own work: mostly short, at one aggregate a round a second
            // or two, longer than a claim takes to see the other producer's committed save
            waitQuietly(
                Duration.ofMillis(a % 10 == round % 10 ? 1000 + r.nextInt(1000) : r.nextInt(50)));
            c.commit();
            // once per key: a retry after a commit that failed finds its row (a duplicate) or
            // saves it anew, and both end here once
            extraTickets.incrementAndGet();
            phases.orderedSaved.incrementAndGet();
            break;
          } catch (SQLException | RuntimeException e) {
            waitQuietly(Duration.ofMillis(200)); // the database restarted under us
          }
        }
      }
    }
  }

  /**
   * Bounded: a producer held up by a database restart lets the other go on alone; the next meeting
   * starts afresh.
   */
  private void meetTheOtherProducer() {
    try {
      orderedMeet.await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.BrokenBarrierException
        | java.util.concurrent.TimeoutException e) {
      orderedMeet.reset();
    }
  }

  /** What is still pending, by type and whether it is due, for the run's story. */
  private String pendingByType() {
    String now =
        ticketsDb.kind() == TestDatabase.Kind.MARIADB ? "UTC_TIMESTAMP(3)" : "CURRENT_TIMESTAMP";
    StringBuilder b = new StringBuilder();
    try (Connection c = tickets.getConnection();
        Statement st = c.createStatement();
        java.sql.ResultSet rs =
            st.executeQuery(
                "SELECT biz_type, COUNT(*), SUM(CASE WHEN next_retry_at <= "
                    + now
                    + " THEN 1 ELSE 0 END), SUM(CASE WHEN lease_owner IS NULL THEN 0 ELSE 1 END),"
                    + " MAX(attempts) FROM "
                    + FaultWorker.TABLE
                    + " WHERE status = 0 GROUP BY biz_type")) {
      while (rs.next()) {
        b.append(
            String.format(
                "%s=%d (due %d, leased %d, max attempts %d) ",
                rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
      }
    } catch (SQLException | RuntimeException e) {
      b.append("unknown: ").append(e.getMessage());
    }
    return b.toString();
  }

  private long pending() {
    try {
      return Sql.count(tickets, "SELECT COUNT(*) FROM " + FaultWorker.TABLE + " WHERE status = 0");
    } catch (RuntimeException e) {
      return Long.MAX_VALUE; // unknown while the database restarts
    }
  }

  private void startWorker(long exhaustAfterMs) throws IOException {
    startWorker(exhaustAfterMs, "", false);
  }

  /**
   * Starts a worker; {@code alsoPinned}: the replica whose pinned type it also registers; {@code
   * onlyPinned}: it registers its pinned type and nothing else (an idle replica whose every
   * statement the suite can attribute).
   */
  private Worker startWorker(long exhaustAfterMs, String alsoPinned, boolean onlyPinned)
      throws IOException {
    pressureWorkerStarted |= exhaustAfterMs >= 0;
    String replica = "w" + replicaSeq.incrementAndGet();
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    TcpProxy proxy = null;
    String lmUrl = ticketsDb.jdbcUrl();
    if (upstreamHost != null) {
      proxy = new TcpProxy(upstreamHost, upstreamPort);
      long outageLeft = outageUntilNanos - System.nanoTime();
      if (outageLeft > 0) {
        proxy.cut(Duration.ofNanos(outageLeft)); // started during the outage: away as well
      }
      lmUrl = proxy.rewrite(lmUrl);
    }
    List<String> cmd =
        new ArrayList<>(
            List.of(
                new File(System.getProperty("java.home"), "bin/java").getPath(),
                "-Xmx256m",
                // the engine's warnings and errors (failed polls, lost connections) in the
                // worker's log: what a replica went through is readable after a failed run
                "-Dorg.slf4j.simpleLogger.log.io.localmessage=warn",
                "-cp",
                cp,
                FaultWorker.class.getName(),
                "--replica=" + replica,
                "--lm-url=" + lmUrl,
                "--lm-user=" + ticketsDb.user(),
                "--fx-url=" + effectsDb.jdbcUrl(),
                "--fx-user=" + effectsDb.user(),
                "--inbox=" + plan.inbox(),
                "--exhaust-after-ms=" + exhaustAfterMs,
                "--also-pinned=" + alsoPinned,
                "--only-pinned=" + onlyPinned,
                "--bootstrap=" + (broker == null ? "" : broker.bootstrap())));
    File log = new File(logDir, replica + ".log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
    Worker w = new Worker(replica, p, log);
    w.proxy = proxy;
    workers.add(w);
    return w;
  }

  /** Applied events grew since the last look and some are still to come; or the run is late. */
  private boolean consumerBusy(long before) {
    long now = eventDistinct();
    return (now > before && now < events.get() - 100) || now >= events.get();
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

  private boolean killRandomWorker() throws InterruptedException {
    List<Worker> alive =
        workers.stream()
            .filter(w -> w.process.isAlive() && !w.busy && w.stopMs < 0 && w.ready())
            .toList();
    if (alive.isEmpty()) {
      return false;
    }
    Worker victim = alive.get(random.nextInt(alive.size()));
    victim.killedMs = System.currentTimeMillis();
    victim.process.destroyForcibly(); // SIGKILL: no lease release, no write-back
    victim.process.waitFor(10, TimeUnit.SECONDS);
    return true;
  }

  private void stopWorkers() throws InterruptedException {
    long now = System.currentTimeMillis();
    for (Worker w : workers) {
      if (w.process.isAlive()) {
        if (w.stopMs < 0) {
          w.stopMs = now;
        }
        try {
          w.process.getOutputStream().close(); // graceful: the worker closes its engine
        } catch (IOException ignored) {
          // already gone
        }
      }
    }
    for (Worker w : workers) {
      if (!w.process.waitFor(40, TimeUnit.SECONDS)) {
        w.process.destroyForcibly();
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
            tickets,
            "SELECT COUNT(*) FROM lm WHERE status = 2 AND idem_key NOT LIKE 'perm-%'"
                + " AND idem_key NOT LIKE 'poison-%'");
    long rows = Sql.count(effects, "SELECT COUNT(*) FROM fx_effect");
    long distinct = Sql.count(effects, "SELECT COUNT(DISTINCT idem_key) FROM fx_effect");
    int expectedEffects = saved - permanent + extraTickets.get();
    long deliveries =
        Sql.count(effects, "SELECT COUNT(*) FROM fx_delivery WHERE what = 'delivery'");
    long dups = Sql.count(effects, "SELECT COUNT(*) FROM fx_delivery WHERE what = 'duplicate'");
    long reclaims =
        Sql.count(effects, "SELECT COALESCE(SUM(lease_reclaims), 0) FROM fx_worker_stats");
    long cas = Sql.count(effects, "SELECT COALESCE(SUM(cas_conflicts), 0) FROM fx_worker_stats");
    if (pressureWorkerStarted) {
      phases.handlersOnEnginePool =
          Sql.count(
              effects, "SELECT COALESCE(SUM(handlers_on_engine_pool), 0) FROM fx_worker_stats");
      // reported, not required: the pressure replica starts at a kill past half the run and may
      // be killed again before it ran a handler (a run once counted 0)
    }
    DeliveryAudit.Result audit =
        plan.phases() ? DeliveryAudit.check(tickets, effects, workers, phases) : null;
    return new Report(
        saved,
        expectedEffects,
        permanent + phases.poisonRows,
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
        consumerKills,
        extraTickets.get(),
        plan.phases() ? phases : null,
        audit);
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
