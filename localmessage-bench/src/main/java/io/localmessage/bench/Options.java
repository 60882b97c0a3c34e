package io.localmessage.bench;

import io.localmessage.kafka.KafkaInboxConsumer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Command-line options; {@link #usage()} lists them with their defaults. */
record Options(
    int n,
    boolean large,
    int reps,
    int warmup,
    List<BenchDatabase.Kind> databases,
    Set<String> workloads,
    int concurrency,
    int writeBatchSize,
    int poolSize,
    int peerThreads,
    int floorThreads,
    List<Integer> rates,
    Duration latencyDuration,
    int saveClients,
    Duration saveDuration,
    Duration idleDuration,
    List<Integer> scalingSizes,
    Path out,
    String label,
    int relayConcurrency,
    int relayBatch,
    int consumerBatch,
    int consumerConcurrency,
    int ioN,
    int ioPeerN,
    int ioLatencyMs,
    List<IoDrain.Row> ioRows,
    String ioServer) {

  static final List<String> WORKLOADS =
      List.of("drain", "peers", "save", "latency", "scaling", "idle", "kafka", "consumer", "io");

  /** The io workload's rows unless {@code --io-rows} says otherwise. */
  static final String DEFAULT_IO_ROWS =
      "platform-64,platform-1000,virtual-1000,async-1000,async-5000,floor-5000,dbscheduler,outbox";

  static String usage() {
    return String.join(
        "\n",
        "localmessage-bench [options]",
        "  --n N               backlog of the drains (default 100000)",
        "  --large             1,000,000-ticket drains and a 1M point in the scaling",
        "  --reps R            measured repetitions per figure (default 3)",
        "  --warmup W          repetitions run first and not kept (default 1)",
        "  --db LIST           pg,mariadb (default both; peers, latency, scaling, idle: pg only)",
        "  --only LIST         of " + String.join(",", WORKLOADS) + " (default all)",
        "  --concurrency C     engine slots per replica for the drains (default 64)",
        "  --write-batch B     engine writeBatchSize (default 500)",
        "  --pool P            connections per engine replica (default 4)",
        "  --peer-threads T    worker threads of db-scheduler and transaction-outbox (default 20)",
        "  --floor-threads F   raw-floor threads (1 connection each) per replica (default 2)",
        "  --rates LIST        latency arrival rates per second (default 500,2000)",
        "  --latency-seconds S length of one latency run (default 10)",
        "  --save-clients C    client threads of the save overhead (default 8)",
        "  --save-seconds S    length of one save-overhead run (default 5)",
        "  --idle-seconds S    idle-cost window (default 10)",
        "  --scaling LIST      backlog sizes of the scaling (default 10000,100000[,1000000])",
        "  --relay-concurrency C  engine slots of the Kafka relay drain (default 1000)",
        "  --relay-batch B     tickets per relay handler call (default 100)",
        "  --consumer-batch B  records per transaction of the inbox consumer (default 500)",
        "  --consumer-concurrency C  partitions applied at once per consumer (default 4)",
        "  --io-n N            backlog of the io workload's engine and floor rows (default 50000)",
        "  --io-peer-n N       backlog of its db-scheduler and transaction-outbox rows (default"
            + " 5000)",
        "  --io-latency-ms L   how long the HTTP endpoint takes to answer (default 50)",
        "  --io-rows LIST      of platform-C, virtual-C, async-C, floor-C, dbscheduler[-T],"
            + " outbox[-T]",
        "                      (default " + DEFAULT_IO_ROWS + ";",
        "                      peers without -T use --peer-threads; engine and floor rows",
        "                      take xK for K HTTP clients, e.g. async-1000x2)",
        "  --io-server S       the endpoint's server: jetty (default) or jdk (com.sun.net.httpserver)",
        "  --out DIR           where latest.md and latest.csv go (default <module>/results)",
        "  --label TEXT        a note printed in the header (e.g. 'noisy: shared machine')");
  }

  static Options parse(String[] args) {
    int n = 100_000;
    boolean large = false;
    int reps = 3;
    int warmup = 1;
    List<BenchDatabase.Kind> dbs =
        List.of(BenchDatabase.Kind.POSTGRESQL, BenchDatabase.Kind.MARIADB);
    Set<String> workloads = new LinkedHashSet<>(WORKLOADS);
    int concurrency = 64;
    int writeBatch = 500;
    int pool = 4;
    int peerThreads = 20;
    int floorThreads = 2;
    List<Integer> rates = List.of(500, 2000);
    int latencySeconds = 10;
    int saveClients = 8;
    int saveSeconds = 5;
    int idleSeconds = 10;
    List<Integer> scaling = null;
    String dir = System.getProperty("lm.bench.dir", ".");
    Path out = Path.of(dir, "results");
    String label = "";
    int relayConcurrency = 1000;
    int relayBatch = 100;
    int consumerBatch = KafkaInboxConsumer.DEFAULT_BATCH_SIZE;
    int consumerConcurrency = KafkaInboxConsumer.DEFAULT_CONCURRENCY;
    int ioN = 50_000;
    int ioPeerN = 5_000;
    int ioLatencyMs = 50;
    String ioRows = DEFAULT_IO_ROWS;
    String ioServer = IoEndpoint.JETTY;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--large" -> large = true;
        case "--help", "-h" -> throw new IllegalArgumentException(usage());
        default -> {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException("missing value after " + a + "\n" + usage());
          }
          String v = args[++i];
          switch (a) {
            case "--n" -> n = positive(a, v);
            case "--reps" -> reps = positive(a, v);
            case "--warmup" -> warmup = nonNegative(a, v);
            case "--db" -> {
              List<BenchDatabase.Kind> list = new ArrayList<>();
              for (String s : v.split(",")) {
                list.add(BenchDatabase.Kind.parse(s));
              }
              dbs = List.copyOf(list);
            }
            case "--only" -> {
              workloads = new LinkedHashSet<>();
              for (String s : v.split(",")) {
                String w = s.trim().toLowerCase(Locale.ROOT);
                if (!WORKLOADS.contains(w)) {
                  throw new IllegalArgumentException(
                      "unknown workload '" + s + "': " + String.join(",", WORKLOADS));
                }
                workloads.add(w);
              }
            }
            case "--concurrency" -> concurrency = positive(a, v);
            case "--write-batch" -> writeBatch = positive(a, v);
            case "--pool" -> pool = positive(a, v);
            case "--peer-threads" -> peerThreads = positive(a, v);
            case "--floor-threads" -> floorThreads = positive(a, v);
            case "--rates" -> rates = ints(a, v);
            case "--latency-seconds" -> latencySeconds = positive(a, v);
            case "--save-clients" -> saveClients = positive(a, v);
            case "--save-seconds" -> saveSeconds = positive(a, v);
            case "--idle-seconds" -> idleSeconds = positive(a, v);
            case "--scaling" -> scaling = ints(a, v);
            case "--out" -> out = Path.of(v);
            case "--label" -> label = v;
            case "--relay-concurrency" -> relayConcurrency = positive(a, v);
            case "--relay-batch" -> relayBatch = positive(a, v);
            case "--consumer-batch" -> consumerBatch = positive(a, v);
            case "--consumer-concurrency" -> consumerConcurrency = positive(a, v);
            case "--io-n" -> ioN = positive(a, v);
            case "--io-peer-n" -> ioPeerN = positive(a, v);
            case "--io-latency-ms" -> ioLatencyMs = positive(a, v);
            case "--io-rows" -> ioRows = v;
            case "--io-server" -> {
              ioServer = v.trim().toLowerCase(Locale.ROOT);
              if (!ioServer.equals(IoEndpoint.JETTY) && !ioServer.equals(IoEndpoint.JDK)) {
                throw new IllegalArgumentException("--io-server is jetty or jdk, was '" + v + "'");
              }
            }
            default -> throw new IllegalArgumentException("unknown option " + a + "\n" + usage());
          }
        }
      }
    }
    if (large) {
      n = Math.max(n, 1_000_000);
    }
    if (scaling == null) {
      scaling = large ? List.of(10_000, 100_000, 1_000_000) : List.of(10_000, 100_000);
    }
    List<IoDrain.Row> rows = new ArrayList<>();
    for (String spec : ioRows.split(",")) {
      if (!spec.isBlank()) {
        IoDrain.Row row = IoDrain.Row.parse(spec, peerThreads);
        if (!rows.contains(row)) {
          rows.add(row);
        }
      }
    }
    if (rows.isEmpty()) {
      throw new IllegalArgumentException("--io-rows names no row");
    }
    return new Options(
        n,
        large,
        reps,
        warmup,
        dbs,
        workloads,
        concurrency,
        writeBatch,
        pool,
        peerThreads,
        floorThreads,
        rates,
        Duration.ofSeconds(latencySeconds),
        saveClients,
        Duration.ofSeconds(saveSeconds),
        Duration.ofSeconds(idleSeconds),
        scaling,
        out,
        label,
        relayConcurrency,
        relayBatch,
        consumerBatch,
        consumerConcurrency,
        ioN,
        ioPeerN,
        ioLatencyMs,
        List.copyOf(rows),
        ioServer);
  }

  boolean runs(String workload) {
    return workloads.contains(workload);
  }

  EngineDrain.Settings drainSettings() {
    return new EngineDrain.Settings(concurrency, writeBatchSize, poolSize, Duration.ofMillis(500));
  }

  RelayDrain.Settings relaySettings() {
    return new RelayDrain.Settings(relayConcurrency, relayBatch, poolSize, 262_144);
  }

  ConsumerDrain.Settings consumerSettings() {
    return new ConsumerDrain.Settings(consumerBatch, consumerConcurrency);
  }

  /** Today's mode before batches: one transaction per record, one partition at a time. */
  ConsumerDrain.Settings perRecordSettings() {
    return new ConsumerDrain.Settings(1, 1);
  }

  EngineDrain.Settings latencySettings() {
    return new EngineDrain.Settings(concurrency, writeBatchSize, poolSize, Duration.ofMillis(100));
  }

  private static int positive(String name, String v) {
    int x = parseInt(name, v);
    if (x < 1) {
      throw new IllegalArgumentException(name + " must be at least 1, was " + v);
    }
    return x;
  }

  private static int nonNegative(String name, String v) {
    int x = parseInt(name, v);
    if (x < 0) {
      throw new IllegalArgumentException(name + " must not be negative, was " + v);
    }
    return x;
  }

  private static int parseInt(String name, String v) {
    try {
      return Integer.parseInt(v.replace("_", "").trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " needs a whole number, was '" + v + "'");
    }
  }

  private static List<Integer> ints(String name, String v) {
    List<Integer> out = new ArrayList<>();
    for (String s : v.split(",")) {
      out.add(positive(name, s));
    }
    return List.copyOf(out);
  }
}
