package io.localmessage.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The benchmark's one entry point: runs every workload on every database, repetition by repetition,
 * prints the table and writes {@code latest.md} and {@code latest.csv}.
 *
 * <p>{@code ./mvnw -q -pl localmessage-bench exec:java -Dexec.args="--n 100000"}; see the module
 * README for the workloads and {@link Options#usage()} for the options.
 */
public final class Bench {
  private final Options o;
  private final Recorder rec = new Recorder();
  private final Report report = new Report();
  private final List<String> versions = new ArrayList<>();

  private Bench(Options options) {
    this.o = options;
  }

  static {
    // the validator that transaction-outbox brings logs through jboss-logging: route it to slf4j
    System.setProperty("org.jboss.logging.provider", "slf4j");
  }

  public static void main(String[] args) throws IOException {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    Result r = run(options);
    System.out.println(r.text());
    System.out.println("written: " + r.markdown() + " and " + r.csv());
    if (!r.failures().isEmpty()) {
      System.err.println("some measurements failed: " + r.failures());
      System.exit(1);
    }
  }

  /** What a run produced: the printed table, the files written and the failed measurements. */
  record Result(String text, Path markdown, Path csv, java.util.Map<String, String> failures) {}

  static Result run(Options options) throws IOException {
    return new Bench(options).execute();
  }

  private Result execute() throws IOException {
    Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    double loadBefore = load();
    try {
      measureAll();
    } finally {
      RelayDrain.stopBroker();
      IoEndpoint.stop();
    }
    describe(started, loadBefore, load());
    String text = report.text(rec);
    Files.createDirectories(o.out());
    Path md = o.out().resolve("latest.md");
    Path csv = o.out().resolve("latest.csv");
    Files.writeString(md, report.markdown(rec));
    Files.writeString(csv, report.csv(rec));
    return new Result(text, md, csv, rec.failures());
  }

  private void measureAll() {
    for (BenchDatabase.Kind kind : o.databases()) {
      try (BenchDatabase db = BenchDatabase.open(kind)) {
        versions.add(db.version());
        Workloads w = new Workloads(o, rec, db);
        int total = o.warmup() + o.reps();
        for (int rep = 0; rep < total; rep++) {
          boolean warm = rep < o.warmup();
          rec.beginRep(rep, warm);
          progress(
              "== %s %s %d/%d",
              kind.label,
              warm ? "warm-up" : "repetition",
              warm ? rep + 1 : rep - o.warmup() + 1,
              warm ? o.warmup() : o.reps());
          w.runRepetition(rep);
        }
        if (kind == BenchDatabase.Kind.POSTGRESQL && o.runs("drain")) {
          progress("== %s diagnostics", kind.label);
          try {
            report.diagnostics.addAll(Diagnose.run(db, o.n(), o.drainSettings()));
            report.diagnostics.forEach(x -> progress("  %s", x));
          } catch (Exception e) {
            report.diagnostics.add("diagnostics failed: " + e);
            progress("  diagnostics FAILED: %s", e);
          }
        }
      }
    }
  }

  static void progress(String format, Object... args) {
    System.err.println(String.format(Locale.ROOT, format, args));
  }

  private static String gcNames() {
    return String.join(
        "+",
        ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(java.lang.management.GarbageCollectorMXBean::getName)
            .toList());
  }

  private static double load() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os.getSystemLoadAverage();
  }

  /** Which localmessage-core the run loaded: its jar (or classes folder) and when it was built. */
  private static String coreArtifact() {
    try {
      Path p =
          Path.of(
              io.localmessage.LocalMessages.class
                  .getProtectionDomain()
                  .getCodeSource()
                  .getLocation()
                  .toURI());
      return p.getFileName()
          + " built "
          + Files.getLastModifiedTime(p).toInstant().truncatedTo(ChronoUnit.SECONDS);
    } catch (Exception e) {
      return "unknown (" + e + ")";
    }
  }

  private void describe(Instant started, double loadBefore, double loadAfter) {
    Runtime rt = Runtime.getRuntime();
    long memory = -1;
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      memory = os.getTotalMemorySize() >> 30;
    }
    List<String> h = report.header;
    if (!o.label().isBlank()) {
      h.add("**" + o.label() + "**");
    }
    h.add(
        "run: "
            + started
            + ", "
            + o.reps()
            + " measured repetitions after "
            + o.warmup()
            + " warm-up; figures are min / median / max over the repetitions, ratios are taken pair"
            + " by pair within a repetition");
    h.add(
        String.format(
            Locale.ROOT,
            "machine: %d cores, %d GiB, %s %s; Java %s; load average %.2f before, %.2f after",
            rt.availableProcessors(),
            memory,
            System.getProperty("os.name"),
            System.getProperty("os.arch"),
            System.getProperty("java.version"),
            loadBefore,
            loadAfter));
    h.add("databases: " + String.join(", ", versions) + " (local, default server settings)");
    h.add("core measured: " + coreArtifact());
    h.add(
        "drain backlog: "
            + o.n()
            + " due no-op tickets of "
            + Tickets.PAYLOAD_BYTES
            + "-byte payload, loaded in bulk and VACUUM/ANALYZEd before each drain (same for every"
            + " system); each measurement in a fresh schema (PostgreSQL) or database (MariaDB)");
    h.add("engine (drain, scaling): " + o.drainSettings().describe());
    h.add(
        "raw floor: the core Dialect's claim (limit "
            + o.drainSettings().claimSize()
            + ") and batched"
            + " version-checked delete on plain JDBC, "
            + o.floorThreads()
            + " threads x 1 connection per replica");
    h.add(DbSchedulerDrain.describe(o.peerThreads()));
    h.add(OutboxDrain.describe(o.peerThreads()));
    h.add(
        "save overhead: "
            + o.saveClients()
            + " clients, "
            + o.saveDuration().toSeconds()
            + " s per run, one order row per transaction with/without one ticket save");
    h.add(
        "latency: "
            + Latency.PRODUCERS
            + " producer threads, open-loop arrivals at "
            + o.rates()
            + "/s for "
            + o.latencyDuration().toSeconds()
            + " s; engine "
            + o.latencySettings().describe()
            + "; fast path = dispatchNow(id) right after the commit");
    h.add(
        "kafka relay: the drain backlog as EVENT tickets, "
            + o.relaySettings().describe()
            + "; broker: single-node KRaft in the bench JVM");
    h.add(
        "consumer: KafkaInboxConsumer "
            + o.consumerSettings().describe()
            + " (defaults unless set), topic of "
            + ConsumerDrain.PARTITIONS
            + " partitions, one effect INSERT per record; per-record mode batchSize=1"
            + " concurrency=1");
    if (o.runs("io")) {
      h.add(
          "io: HTTP tickets to an endpoint answering after "
              + o.ioLatencyMs()
              + " ms ("
              + (o.ioServer().equals(IoEndpoint.JETTY)
                  ? "Jetty " + org.eclipse.jetty.util.Jetty.VERSION
                  : "JDK com.sun.net.httpserver")
              + " in its own JVM, not counted); backlog "
              + o.ioN()
              + " (engine, floor), "
              + o.ioPeerN()
              + " (peers), each cut to "
              + IoDrain.ROW_BUDGET.toSeconds()
              + " s at its ideal rate; rows "
              + o.ioRows().stream().map(IoDrain.Row::id).toList()
              + "; open-file limit "
              + ProcessMeter.maxFds()
              + "; JVM "
              + Runtime.version()
              + " ("
              + System.getProperty("java.vm.name")
              + "), heap max "
              + (Runtime.getRuntime().maxMemory() >> 20)
              + " MiB, GC "
              + gcNames());
    }
    h.add(
        "idle cost: statements per second of one idle replica, counted by a wrapper around its"
            + " data source over "
            + o.idleDuration().toSeconds()
            + " s");
    Workloads.describeRows(o, report);
  }
}
