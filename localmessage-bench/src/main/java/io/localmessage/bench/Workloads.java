package io.localmessage.bench;

import java.util.List;
import java.util.Locale;

/**
 * Runs one repetition of every selected workload on one database, and declares their rows. (Longer
 * than most files: one short method per workload, kept side by side so the workloads of a report
 * are read in one place.)
 */
final class Workloads {
  private final Options o;
  private final Recorder rec;
  private final BenchDatabase db;
  private final String d;

  Workloads(Options o, Recorder rec, BenchDatabase db) {
    this.o = o;
    this.rec = rec;
    this.db = db;
    this.d = db.kind.label;
  }

  private boolean pg() {
    return db.kind == BenchDatabase.Kind.POSTGRESQL;
  }

  void runRepetition(int rep) {
    EngineDrain.Settings s = o.drainSettings();
    int n = o.n();
    if (o.runs("drain")) {
      drain(d + ".drain.engine.1", "drain engine x1", sc -> EngineDrain.run(sc, n, 1, s));
      drain(
          d + ".drain.floor.1",
          "drain floor x1",
          sc -> SqlFloor.run(sc, n, o.floorThreads(), s.claimSize(), SqlFloor.Variant.DIALECT));
      drain(d + ".drain.engine.2", "drain engine x2", sc -> EngineDrain.run(sc, n, 2, s));
      drain(
          d + ".drain.floor.2",
          "drain floor x2",
          sc -> SqlFloor.run(sc, n, 2 * o.floorThreads(), s.claimSize(), SqlFloor.Variant.DIALECT));
      if (pg()) {
        drain(
            d + ".drain.floor.minimal",
            "drain floor (minimal claim) x1",
            sc -> SqlFloor.run(sc, n, o.floorThreads(), s.claimSize(), SqlFloor.Variant.MINIMAL));
      }
    }
    if (o.runs("peers") && pg()) {
      drain(
          d + ".peers.dbscheduler",
          "db-scheduler",
          sc -> DbSchedulerDrain.run(sc, n, o.peerThreads()));
      drain(
          d + ".peers.outbox", "transaction-outbox", sc -> OutboxDrain.run(sc, n, o.peerThreads()));
    }
    if (o.runs("scaling") && pg()) {
      for (int size : o.scalingSizes()) {
        String key = d + ".scaling." + size;
        if (size == n && rec.has(d + ".drain.engine.1") && o.runs("drain") && !rec.inWarmup()) {
          // the drain above measured this very case in this repetition
          List<Double> v = rec.values(d + ".drain.engine.1");
          rec.put(key, v.get(v.size() - 1));
          continue;
        }
        drain(key, "scaling " + size, sc -> EngineDrain.run(sc, size, 1, s));
      }
    }
    if (o.runs("save")) {
      // rotate which goes first, so drift on the machine does not favour one side
      SaveOverhead.Mode[] modes = SaveOverhead.Mode.values();
      for (int i = 0; i < modes.length; i++) {
        SaveOverhead.Mode mode = modes[(i + rep) % modes.length];
        String key = d + ".save." + mode.name().toLowerCase(Locale.ROOT);
        measure(
            key,
            "save " + mode.name().toLowerCase(Locale.ROOT),
            sc -> SaveOverhead.run(sc, mode, o.saveClients(), o.saveDuration()),
            "tx/s");
      }
    }
    if (o.runs("latency") && pg()) {
      for (int rate : o.rates()) {
        for (boolean fast : new boolean[] {false, true}) {
          latency(
              d + ".latency." + rate + "." + (fast ? "on" : "off"),
              String.format("latency %d/s fast path %s", rate, fast ? "on" : "off"),
              scope -> Latency.run(scope, rate, o.latencyDuration(), fast, o.latencySettings()));
        }
      }
      for (int rate : o.rates()) {
        for (boolean wake : new boolean[] {false, true}) {
          latency(
              d + ".latency.split." + rate + "." + (wake ? "on" : "off"),
              String.format("latency split %d/s wake-ups %s", rate, wake ? "on" : "off"),
              scope -> Latency.split(scope, rate, o.latencyDuration(), wake, o.latencySettings()));
        }
      }
    }
    if (o.runs("idle")) {
      // every database: adaptive polling must cost nothing extra when idle
      for (int poll : new int[] {500, 100}) {
        measure(
            d + ".idle.engine." + poll,
            "idle engine poll " + poll + " ms",
            sc -> IdleCost.engine(sc, java.time.Duration.ofMillis(poll), o.idleDuration()),
            "statements/s");
      }
    }
    if (o.runs("idle") && pg()) {
      measure(
          d + ".idle.dbscheduler",
          "idle db-scheduler",
          sc -> IdleCost.dbScheduler(sc, o.peerThreads(), o.idleDuration()),
          "statements/s");
    }
    if (o.runs("io")) {
      // before the Kafka workloads: their broker's threads would be counted in the io rows'
      IoWorkload.runRepetition(o, rec, db);
    }
    if (o.runs("kafka") && pg()) {
      drain(d + ".kafka.relay", "kafka relay", sc -> RelayDrain.run(sc, n, o.relaySettings()));
    }
    if (o.runs("consumer")) {
      consumerRepetition(n);
    }
  }

  /** Floor threads matching the consumers' lanes: one per partition they apply at once. */
  static int floorThreads(Options o, int instances) {
    return Math.min(instances * o.consumerSettings().concurrency(), ConsumerDrain.PARTITIONS);
  }

  /** The per-record mode is ~10x slower: it applies a tenth of the backlog (a rate either way). */
  static int perRecordCount(int n) {
    return Math.max(1, n / 10);
  }

  private void consumerRepetition(int n) {
    ConsumerDrain.Settings s = o.consumerSettings();
    int batch = s.batchSize();
    drain(
        d + ".consumer.batch.1",
        "consumer x1",
        sc -> ConsumerDrain.consumers(sc, n, 1, s),
        "records/s");
    drain(
        d + ".consumer.floor.1",
        "consumer floor, " + floorThreads(o, 1) + " conn.",
        sc -> ConsumerDrain.floor(sc, n, floorThreads(o, 1), batch, ConsumerDrain.Inbox.BULK),
        "records/s");
    drain(
        d + ".consumer.batch.3",
        "consumer x3",
        sc -> ConsumerDrain.consumers(sc, n, 3, s),
        "records/s");
    drain(
        d + ".consumer.floor.3",
        "consumer floor, " + floorThreads(o, 3) + " conn.",
        sc -> ConsumerDrain.floor(sc, n, floorThreads(o, 3), batch, ConsumerDrain.Inbox.BULK),
        "records/s");
    drain(
        d + ".consumer.floor.rows",
        "consumer floor, row inbox",
        sc -> ConsumerDrain.floor(sc, n, floorThreads(o, 1), batch, ConsumerDrain.Inbox.ROW),
        "records/s");
    int few = perRecordCount(n);
    drain(
        d + ".consumer.record.1",
        "consumer per-record x1",
        sc -> ConsumerDrain.consumers(sc, few, 1, o.perRecordSettings()),
        "records/s");
    drain(
        d + ".consumer.record.3",
        "consumer per-record x3",
        sc -> ConsumerDrain.consumers(sc, few, 3, o.perRecordSettings()),
        "records/s");
  }

  /** One latency measurement: records its percentiles and rate under {@code key}. */
  private void latency(String key, String label, LatencyRun run) {
    try (Scope scope = scope()) {
      Latency.Result r = run.run(scope);
      rec.put(key + ".p50", r.p50());
      rec.put(key + ".p95", r.p95());
      rec.put(key + ".p99", r.p99());
      rec.put(key + ".max", r.max());
      rec.put(key + ".rate", r.achievedRate());
      Bench.progress(
          "  %s: p50 %.2f p95 %.2f p99 %.2f max %.2f ms (%.0f/s)",
          label, r.p50(), r.p95(), r.p99(), r.max(), r.achievedRate());
    } catch (Exception | LinkageError | AssertionError e) {
      for (String p : new String[] {".p50", ".p95", ".p99", ".max", ".rate"}) {
        rec.fail(key + p, e);
      }
      Bench.progress("  %s FAILED: %s", label, e);
    }
  }

  private interface LatencyRun {
    Latency.Result run(Scope scope) throws Exception;
  }

  private Scope scope() {
    return db.newScope();
  }

  /** A measurement in a fresh scope of its own, dropped afterwards. */
  private interface Body<T> {
    T run(Scope scope) throws Exception;
  }

  private <T> T inScope(Body<T> body) throws Exception {
    try (Scope scope = scope()) {
      return body.run(scope);
    }
  }

  private void drain(String key, String label, Body<Drain.Result> body) {
    drain(key, label, body, "tickets/s");
  }

  private void drain(String key, String label, Body<Drain.Result> body, String unit) {
    try {
      Drain.Result r = inScope(body);
      if (r.handled() != r.n()) {
        throw new IllegalStateException(
            label + ": " + r.handled() + " deliveries for " + r.n() + " tickets");
      }
      rec.put(key, r.perSecond());
      if (!Double.isNaN(r.commitsPer1k())) {
        rec.put(key + ".commits", r.commitsPer1k());
      }
      if (r.retries() > 0) {
        rec.put(key + ".retries", r.retries());
      }
      Bench.progress(
          "  %-32s %,10.0f %s  (%,d in %.2f s%s%s)",
          label,
          r.perSecond(),
          unit,
          r.n(),
          r.seconds(),
          Double.isNaN(r.commitsPer1k())
              ? ""
              : String.format(Locale.ROOT, ", %.1f commits/1k", r.commitsPer1k()),
          r.retries() > 0 ? ", " + r.retries() + " deadlock retries" : "");
    } catch (Exception | LinkageError | AssertionError e) {
      rec.fail(key, e);
      Bench.progress("  %-32s FAILED: %s", label, e);
    }
  }

  private void measure(String key, String label, Body<Double> body, String unit) {
    try {
      double v = inScope(body);
      rec.put(key, v);
      Bench.progress("  %-32s %,10.1f %s", label, v, unit);
    } catch (Exception | LinkageError | AssertionError e) {
      rec.fail(key, e);
      Bench.progress("  %-32s FAILED: %s", label, e);
    }
  }

  /** The rows, goals and notes of the report for the selected workloads. */
  static void describeRows(Options o, Report r) {
    for (BenchDatabase.Kind kind : o.databases()) {
      String d = kind.label;
      boolean pg = kind == BenchDatabase.Kind.POSTGRESQL;
      if (o.runs("drain")) {
        r.row(
            "drain",
            d,
            "engine, 1 replica",
            "tickets/s",
            d + ".drain.engine.1",
            "engine/floor",
            d + ".drain.engine.1",
            d + ".drain.floor.1");
        r.row(
            "drain",
            d,
            "raw-SQL floor, " + o.floorThreads() + " connections",
            "tickets/s",
            d + ".drain.floor.1");
        r.row(
            "drain",
            d,
            "engine, 2 replicas",
            "tickets/s",
            d + ".drain.engine.2",
            "engine/floor",
            d + ".drain.engine.2",
            d + ".drain.floor.2");
        r.row(
            "drain",
            d,
            "raw-SQL floor, " + 2 * o.floorThreads() + " connections",
            "tickets/s",
            d + ".drain.floor.2");
        if (pg) {
          r.row(
              "drain",
              d,
              "floor with a minimal single-type claim, " + o.floorThreads() + " conn.",
              "tickets/s",
              d + ".drain.floor.minimal",
              "dialect floor/minimal",
              d + ".drain.floor.1",
              d + ".drain.floor.minimal");
        }
      }
      if (o.runs("peers")) {
        if (pg) {
          r.row(
              "peers",
              d,
              "db-scheduler 16.7.1",
              "jobs/s",
              d + ".peers.dbscheduler",
              "engine/db-scheduler",
              d + ".drain.engine.1",
              d + ".peers.dbscheduler");
          r.row(
              "peers",
              d,
              "transaction-outbox 4.2.268",
              "jobs/s",
              d + ".peers.outbox",
              "engine/outbox",
              d + ".drain.engine.1",
              d + ".peers.outbox");
          r.missing(
              "peers",
              d,
              "Spring Modulith JDBC event registry",
              "not run: needs a Spring application context and its listener infrastructure;"
                  + " it resubmits incomplete publications on restart or by an explicit call,"
                  + " with no competing-consumer drain of a backlog to compare");
        } else {
          r.missing(
              "peers",
              d,
              "db-scheduler, transaction-outbox",
              "PostgreSQL only (db-scheduler's lock-and-fetch is not implemented for MariaDB)");
        }
      }
      if (pg && (o.runs("drain") || o.runs("peers"))) {
        for (String[] c :
            new String[][] {
              {"engine, 1 replica", d + ".drain.engine.1"},
              {"raw-SQL floor, " + o.floorThreads() + " connections", d + ".drain.floor.1"},
              {"floor, minimal claim", d + ".drain.floor.minimal"},
              {"db-scheduler", d + ".peers.dbscheduler"},
              {"transaction-outbox", d + ".peers.outbox"}
            }) {
          if ((c[1].contains(".peers.") && o.runs("peers"))
              || (c[1].contains(".drain.") && o.runs("drain"))) {
            r.row("commits", d, c[0], "commits/1k tickets", c[1] + ".commits");
          }
        }
      }
      if (o.runs("scaling") && pg) {
        List<Integer> sizes = o.scalingSizes();
        int first = sizes.get(0);
        for (int size : sizes) {
          if (size == first) {
            r.row("scaling", d, "engine x1, backlog " + size, "tickets/s", d + ".scaling." + size);
          } else {
            r.row(
                "scaling",
                d,
                "engine x1, backlog " + size,
                "tickets/s",
                d + ".scaling." + size,
                "vs backlog " + first,
                d + ".scaling." + size,
                d + ".scaling." + first);
          }
        }
      }
      if (o.runs("save")) {
        r.row("save", d, "order insert only", "tx/s", d + ".save.without");
        r.row(
            "save",
            d,
            "order insert + ticket save",
            "tx/s",
            d + ".save.save",
            "cost (without/with)",
            d + ".save.without",
            d + ".save.save");
        r.row(
            "save",
            d,
            "order insert + ordered ticket save (locks its aggregate)",
            "tx/s",
            d + ".save.save_ordered",
            "cost (unordered/ordered)",
            d + ".save.save",
            d + ".save.save_ordered");
        r.row(
            "save",
            d,
            "order insert + the same ticket INSERT, plain JDBC",
            "tx/s",
            d + ".save.raw_insert",
            "cost (without/with)",
            d + ".save.without",
            d + ".save.raw_insert");
        r.row(
            "save",
            d,
            "order insert + an empty statement (SELECT 1)",
            "tx/s",
            d + ".save.round_trip",
            "cost (without/with)",
            d + ".save.without",
            d + ".save.round_trip");
        r.row(
            "save",
            d,
            "order insert + a second order row",
            "tx/s",
            d + ".save.second_row",
            "cost (without/with)",
            d + ".save.without",
            d + ".save.second_row");
      }
      if (o.runs("latency") && pg) {
        for (int rate : o.rates()) {
          for (String mode : new String[] {"off", "on"}) {
            String k = d + ".latency." + rate + "." + mode;
            String what = rate + "/s, fast path " + mode;
            r.row("latency", d, what + ": p50", "ms", k + ".p50");
            r.row("latency", d, what + ": p95", "ms", k + ".p95");
            r.row("latency", d, what + ": p99", "ms", k + ".p99");
            r.row("latency", d, what + ": max", "ms", k + ".max");
            r.row("latency", d, what + ": achieved rate", "tx/s", k + ".rate");
          }
        }
        for (int rate : o.rates()) {
          for (String mode : new String[] {"off", "on"}) {
            String k = d + ".latency.split." + rate + "." + mode;
            String what = "split (producer + 2 workers), " + rate + "/s, wake-ups " + mode;
            r.row("latency", d, what + ": p50", "ms", k + ".p50");
            r.row("latency", d, what + ": p95", "ms", k + ".p95");
            r.row("latency", d, what + ": p99", "ms", k + ".p99");
            r.row("latency", d, what + ": max", "ms", k + ".max");
            r.row("latency", d, what + ": achieved rate", "tx/s", k + ".rate");
          }
        }
      }
      if (o.runs("idle")) {
        r.row(
            "idle",
            d,
            pg ? "engine, poll 500 ms (default, wake-ups listening)" : "engine, poll 500 ms",
            "statements/s",
            d + ".idle.engine.500");
        r.row("idle", d, "engine, poll 100 ms", "statements/s", d + ".idle.engine.100");
      }
      if (o.runs("idle") && pg) {
        r.row("idle", d, "db-scheduler, poll 100 ms", "statements/s", d + ".idle.dbscheduler");
      }
      if (o.runs("kafka") && pg) {
        r.row("kafka", d, "relay to a local broker, acks=all", "events/s", d + ".kafka.relay");
      }
      if (o.runs("consumer")) {
        consumerRows(o, r, d, pg);
      }
    }
    goals(o, r);
    notes(o, r);
    if (o.runs("io")) {
      IoWorkload.describeRows(o, r);
    }
  }

  private static void consumerRows(Options o, Report r, String d, boolean pg) {
    String k = d + ".consumer.";
    String defaults = o.consumerSettings().describe();
    r.row(
        "consumer",
        d,
        "inbox consumer, 1 instance (" + defaults + ")",
        "records/s",
        k + "batch.1",
        "consumer/floor",
        k + "batch.1",
        k + "floor.1");
    r.row(
        "consumer",
        d,
        "floor: same statements, plain JDBC, " + floorThreads(o, 1) + " connections",
        "records/s",
        k + "floor.1");
    r.row(
        "consumer",
        d,
        "inbox consumer, 3 instances of one group",
        "records/s",
        k + "batch.3",
        "consumer/floor",
        k + "batch.3",
        k + "floor.3");
    r.row(
        "consumer",
        d,
        "floor: same statements, plain JDBC, " + floorThreads(o, 3) + " connections",
        "records/s",
        k + "floor.3");
    r.row(
        "consumer",
        d,
        "floor with one inbox INSERT per record, " + floorThreads(o, 1) + " connections",
        "records/s",
        k + "floor.rows",
        "bulk/row inbox floor",
        k + "floor.1",
        k + "floor.rows");
    r.row(
        "consumer",
        d,
        "per-record mode (batchSize=1 concurrency=1), 1 instance",
        "records/s",
        k + "record.1",
        "batched/per-record",
        k + "batch.1",
        k + "record.1");
    r.row(
        "consumer",
        d,
        "per-record mode, 3 instances",
        "records/s",
        k + "record.3",
        "batched/per-record",
        k + "batch.3",
        k + "record.3");
    if (pg) {
      for (String[] c :
          new String[][] {
            {"inbox consumer, 1 instance", k + "batch.1"},
            {"consumer floor, " + floorThreads(o, 1) + " connections", k + "floor.1"},
            {"per-record mode, 1 instance", k + "record.1"}
          }) {
        r.row("commits", d, c[0], "commits/1k records", c[1] + ".commits");
      }
    }
  }

  private static void goals(Options o, Report r) {
    for (BenchDatabase.Kind kind : o.databases()) {
      String d = kind.label;
      boolean pg = kind == BenchDatabase.Kind.POSTGRESQL;
      if (o.runs("drain")) {
        r.goals.add(
            new Report.Goal(
                d + ": drain >= 0.8x the raw floor (1 replica)",
                null,
                d + ".drain.engine.1",
                d + ".drain.floor.1",
                0.8,
                true));
        r.goals.add(
            new Report.Goal(
                d + ": drain >= 0.8x the raw floor (2 replicas)",
                null,
                d + ".drain.engine.2",
                d + ".drain.floor.2",
                0.8,
                true));
      }
      if (o.runs("peers") && o.runs("drain") && pg) {
        r.goals.add(
            new Report.Goal(
                d + ": drain >= 4.5x db-scheduler",
                null,
                d + ".drain.engine.1",
                d + ".peers.dbscheduler",
                4.5,
                true));
        r.goals.add(
            new Report.Goal(
                d + ": drain >= 7x transaction-outbox",
                null,
                d + ".drain.engine.1",
                d + ".peers.outbox",
                7,
                true));
      }
      if (o.runs("save")) {
        r.goals.add(
            new Report.Goal(
                d + ": save overhead <= 1.2x",
                null,
                d + ".save.without",
                d + ".save.save",
                1.2,
                false));
        r.goals.add(
            new Report.Goal(
                d + ": ordered save <= 1.2x unordered",
                null,
                d + ".save.save",
                d + ".save.save_ordered",
                1.2,
                false));
      }
      if (o.runs("latency") && pg && o.rates().contains(2000)) {
        r.goals.add(
            new Report.Goal(
                d + ": fast path commit->handler p50 <= 5 ms at 2,000/s",
                d + ".latency.2000.on.p50",
                null,
                null,
                5,
                false));
        r.goals.add(
            new Report.Goal(
                d + ": fast path commit->handler p99 <= 50 ms at 2,000/s",
                d + ".latency.2000.on.p99",
                null,
                null,
                50,
                false));
        r.goals.add(
            new Report.Goal(
                d + ": split deployment, wake-ups: commit->handler p50 <= 10 ms at 2,000/s",
                d + ".latency.split.2000.on.p50",
                null,
                null,
                10,
                false));
        r.goals.add(
            new Report.Goal(
                d + ": split deployment, wake-ups: commit->handler p99 <= 50 ms at 2,000/s",
                d + ".latency.split.2000.on.p99",
                null,
                null,
                50,
                false));
      }
      if (o.runs("scaling") && pg && o.scalingSizes().size() > 1) {
        List<Integer> sizes = o.scalingSizes();
        int first = sizes.get(0);
        int last = sizes.get(sizes.size() - 1);
        r.goals.add(
            new Report.Goal(
                d
                    + ": drain at "
                    + last
                    + " backlog >= 0.8x at "
                    + first
                    + (last < 1_000_000 ? " (goal is stated for 1M: run --large)" : ""),
                null,
                d + ".scaling." + last,
                d + ".scaling." + first,
                0.8,
                true));
      }
      if (o.runs("consumer")) {
        if (pg) {
          r.goals.add(
              new Report.Goal(
                  d + ": inbox consumer >= 10,000 records/s (1 instance)",
                  d + ".consumer.batch.1",
                  null,
                  null,
                  10_000,
                  true));
        }
        r.goals.add(
            new Report.Goal(
                d + ": inbox consumer >= 0.7x its floor (1 instance)",
                null,
                d + ".consumer.batch.1",
                d + ".consumer.floor.1",
                0.7,
                true));
      }
      if (o.runs("kafka") && pg) {
        r.goals.add(
            new Report.Goal(
                d + ": Kafka relay >= 20,000 events/s",
                d + ".kafka.relay",
                null,
                null,
                20_000,
                true));
      }
    }
  }

  private static void notes(Options o, Report r) {
    r.notes.add(
        "drain: time from start() of the engine(s) to an empty table; every ticket handled"
            + " exactly once (checked). The floor issues the same claim and delete statements as"
            + " the engine (the core's Dialect) from "
            + o.floorThreads()
            + " threads per replica, each claim then delete"
            + " on its own connection, no engine.");
    r.notes.add(
        "commits/1k tickets: pg_stat_database.xact_commit delta of the bench database over the"
            + " drain, the completion monitor's own queries subtracted; shows round trips that"
            + " commit (the engine's claims and deletes are autocommit statements).");
    r.notes.add(
        "peers: same database, same backlog size, each configured for throughput as its"
            + " documentation describes; their per-job INFO logging is silenced and slf4j 2.x is"
            + " pinned. transaction-outbox's backlog is made due before the run.");
    r.notes.add(
        "consumer: a topic of 6 partitions preloaded once per run with "
            + o.n()
            + " relayed events (64-byte payload, 1,000 keys) in the bench JVM's broker; each"
            + " measurement is a new consumer group and fresh tables, timed from start() until the"
            + " effect table holds every event (checked: exactly once). The floor applies the same"
            + " events with the consumer's statements (one inbox INSERT per 100 records, one"
            + " effect INSERT per record, one commit per batch) on plain JDBC threads, one per"
            + " partition the consumers apply at once; no Kafka. The per-record mode applies "
            + perRecordCount(o.n())
            + " events (a rate either way).");
    r.notes.add(
        "latency: commit->handler start, measured from the producer's clock read right after"
            + " commit to the handler's first instruction (same JVM clock).");
  }
}
