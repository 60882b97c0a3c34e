package io.localmessage.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Workload 9, {@code io}: HTTP tickets against an endpoint that answers after {@code
 * --io-latency-ms}, drained by one replica in each of {@link IoDrain.Kind}'s ways; one repetition,
 * and the rows, summary, goals and notes of the report.
 */
final class IoWorkload {
  /** The figures of a row, by key suffix: suffix, what, unit. */
  private static final String[][] FIGURES = {
    {"", "tickets/s", "tickets/s"},
    {".threads", "peak live threads", "threads"},
    {".cpu", "process CPU", "CPU s"},
    {".cpu1k", "process CPU per 1k tickets", "CPU ms/1k"},
    {".heap", "peak heap used", "MiB"},
    {".live", "live heap after GC", "MiB"},
    {".alloc", "allocated per ticket", "KiB/ticket"},
    {".fds", "peak open fds", "fds"},
    {".rtt", "mean HTTP round trip", "ms"}
  };

  private IoWorkload() {}

  static String key(String db, IoDrain.Row row) {
    return db + ".io." + row.id();
  }

  /** The backlog a row drains (peers their own, every row cut to its time budget). */
  static int backlog(Options o, IoDrain.Row row) {
    return row.backlog(row.kind().peer() ? o.ioPeerN() : o.ioN(), o.ioLatencyMs());
  }

  static boolean runs(BenchDatabase.Kind db, IoDrain.Row row) {
    if (row.kind().peer() && db != BenchDatabase.Kind.POSTGRESQL) {
      return false;
    }
    return row.kind() != IoDrain.Kind.VIRTUAL || IoDrain.virtualThreadsAvailable();
  }

  static void runRepetition(Options o, Recorder rec, BenchDatabase db) {
    String d = db.kind.label;
    IoEndpoint.Process endpoint;
    try {
      endpoint = IoEndpoint.shared(o.ioLatencyMs(), o.ioServer());
    } catch (IOException | RuntimeException e) {
      for (IoDrain.Row row : o.ioRows()) {
        fail(rec, key(d, row), e);
      }
      Bench.progress("  io endpoint FAILED: %s", e);
      return;
    }
    for (IoDrain.Row row : o.ioRows()) {
      if (!runs(db.kind, row)) {
        continue;
      }
      String key = key(d, row);
      int n = backlog(o, row);
      String label = row.id();
      try (Scope scope = db.newScope()) {
        checkFileDescriptors(row, endpoint);
        Map<String, String> before = endpoint.stats();
        IoDrain.Result r = IoDrain.run(scope, row, n, endpoint, o.drainSettings());
        Map<String, String> after = endpoint.stats();
        long served = delta(before, after, "requests");
        long failed = delta(before, after, "failed");
        Drain.Result dr = r.drain();
        if (dr.handled() != dr.n()) {
          throw new IllegalStateException(
              label + ": " + dr.handled() + " deliveries for " + dr.n() + " tickets");
        }
        if (served != dr.n() || failed != 0) {
          throw new IllegalStateException(
              label
                  + ": the endpoint served "
                  + served
                  + " requests ("
                  + failed
                  + " answers failed) for "
                  + dr.n()
                  + " tickets");
        }
        ProcessMeter.Reading m = r.reading();
        rec.put(key, dr.perSecond());
        rec.put(key + ".threads", m.peakThreads());
        rec.put(key + ".cpu", m.cpuSeconds());
        rec.put(key + ".cpu1k", m.cpuSeconds() * 1000 * 1000 / dr.n());
        rec.put(key + ".heap", m.heapPeakBytes() / 1048576.0);
        rec.put(key + ".live", m.liveHeapBytes() / 1048576.0);
        rec.put(key + ".alloc", m.allocatedBytes() / 1024 / dr.n());
        rec.put(key + ".fds", m.fdPeak());
        rec.put(key + ".rtt", r.meanRoundTripMs());
        rec.put(key + ".n", dr.n());
        rec.put(key + ".baseline", m.baselineThreads());
        rec.put(key + ".endpointcpu", delta(before, after, "cpu_ns") / 1e9);
        Bench.progress(
            "  io %-16s %,9.0f tickets/s (%,d in %.2f s) threads %d (idle %d) CPU %.2f s heap"
                + " %.0f MiB (live %.0f) fds %d rtt %.1f ms endpoint CPU %.2f s",
            label,
            dr.perSecond(),
            dr.n(),
            dr.seconds(),
            m.peakThreads(),
            m.baselineThreads(),
            m.cpuSeconds(),
            m.heapPeakBytes() / 1048576.0,
            m.liveHeapBytes() / 1048576.0,
            m.fdPeak(),
            r.meanRoundTripMs(),
            delta(before, after, "cpu_ns") / 1e9);
      } catch (Exception | LinkageError | AssertionError e) {
        fail(rec, key, e);
        Bench.progress("  io %-16s FAILED: %s", label, e);
      }
    }
  }

  private static void fail(Recorder rec, String key, Throwable e) {
    for (String[] f : FIGURES) {
      rec.fail(key + f[0], e);
    }
  }

  private static long delta(Map<String, String> before, Map<String, String> after, String name) {
    return Long.parseLong(after.get(name)) - Long.parseLong(before.get(name));
  }

  /**
   * Each request in flight holds one HTTP/1.1 connection, one descriptor on each side: refuses a
   * row the open-file limits cannot hold, naming them, instead of failing halfway through it.
   */
  private static void checkFileDescriptors(IoDrain.Row row, IoEndpoint.Process endpoint)
      throws IOException {
    long need = row.slots() + 256L;
    long bench = ProcessMeter.maxFds();
    long server = Long.parseLong(endpoint.stats().get("max_fds"));
    if ((bench > 0 && bench < need) || (server > 0 && server < need)) {
      throw new IllegalStateException(
          row.id()
              + " needs about "
              + need
              + " open files per process, the limit is "
              + bench
              + " (bench) and "
              + server
              + " (endpoint): raise it (ulimit -n) in the shell that starts the bench");
    }
  }

  /** The async row with the most in flight: the one the goals are about. */
  static Optional<IoDrain.Row> goalRow(Options o) {
    return o.ioRows().stream()
        .filter(r -> r.kind() == IoDrain.Kind.ASYNC)
        .max((a, b) -> Integer.compare(a.slots(), b.slots()));
  }

  private static Optional<IoDrain.Row> floorFor(Options o, IoDrain.Row row) {
    return o.ioRows().stream()
        .filter(r -> r.kind() == IoDrain.Kind.FLOOR && r.slots() == row.slots())
        .findFirst();
  }

  static void describeRows(Options o, Report r) {
    Optional<IoDrain.Row> best = goalRow(o);
    for (BenchDatabase.Kind kind : o.databases()) {
      String d = kind.label;
      boolean peersNoted = false;
      for (IoDrain.Row row : o.ioRows()) {
        int n = backlog(o, row);
        String what = row.label() + " (backlog " + String.format(Locale.ROOT, "%,d", n) + ")";
        if (row.kind().peer() && kind != BenchDatabase.Kind.POSTGRESQL) {
          if (!peersNoted) {
            r.missing(
                "io",
                d,
                "db-scheduler, transaction-outbox",
                "PostgreSQL only (db-scheduler's lock-and-fetch is not implemented for MariaDB)");
            peersNoted = true;
          }
          continue;
        }
        if (!runs(kind, row)) {
          r.missing(
              "io",
              d,
              what,
              "needs Java 21+ (virtual threads); this JVM is "
                  + Runtime.version().feature()
                  + ": run the bench on Java 21 or later for this row");
          continue;
        }
        String k = key(d, row);
        for (String[] f : FIGURES) {
          String case_ = what + ": " + f[1];
          if (f[0].isEmpty() && row.kind().peer() && best.isPresent()) {
            r.row("io", d, case_, f[2], k, best.get().id() + "/peer", key(d, best.get()), k);
          } else if (f[0].isEmpty() && row.kind().engine() && floorFor(o, row).isPresent()) {
            r.row("io", d, case_, f[2], k, "engine/floor", k, key(d, floorFor(o, row).get()));
          } else {
            r.row("io", d, case_, f[2], k + f[0]);
          }
        }
      }
      r.sections.add(summary(o, kind));
    }
    goals(o, r, best);
    notes(o, r);
  }

  /** One line per row, medians across: the figures side by side. */
  private static Report.Section summary(Options o, BenchDatabase.Kind kind) {
    String d = kind.label;
    return new Report.Section() {
      @Override
      public String title() {
        return "io summary, " + d + " (medians; threads, CPU, heap and fds of the bench process)";
      }

      @Override
      public String[] columns() {
        return new String[] {
          "case",
          "backlog",
          "tickets/s",
          "of ideal",
          "peak threads (idle)",
          "CPU s",
          "CPU ms/1k",
          "peak heap MiB (live)",
          "KiB/ticket",
          "peak fds",
          "round trip ms",
          "endpoint CPU s"
        };
      }

      @Override
      public List<String[]> rows(Recorder rec) {
        List<String[]> out = new ArrayList<>();
        for (IoDrain.Row row : o.ioRows()) {
          if (!runs(kind, row)) {
            continue;
          }
          String k = key(d, row);
          double rate = median(rec, k);
          double ideal = row.idealPerSecond(o.ioLatencyMs());
          out.add(
              new String[] {
                row.id(),
                num(median(rec, k + ".n"), "%,.0f"),
                num(rate, "%,.0f"),
                num(rate / ideal * 100, "%.1f%%"),
                num(median(rec, k + ".threads"), "%.0f")
                    + " ("
                    + num(median(rec, k + ".baseline"), "%.0f")
                    + ")",
                num(median(rec, k + ".cpu"), "%.2f"),
                num(median(rec, k + ".cpu1k"), "%.0f"),
                num(median(rec, k + ".heap"), "%.0f")
                    + " ("
                    + num(median(rec, k + ".live"), "%.0f")
                    + ")",
                num(median(rec, k + ".alloc"), "%.1f"),
                num(median(rec, k + ".fds"), "%.0f"),
                num(median(rec, k + ".rtt"), "%.1f"),
                num(median(rec, k + ".endpointcpu"), "%.2f")
              });
        }
        return out;
      }
    };
  }

  private static double median(Recorder rec, String key) {
    return Stats.of(rec.values(key)).median();
  }

  private static String num(double v, String format) {
    return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, format, v);
  }

  /**
   * The goals, judged on every async row: which configuration meets them (if any) is part
   * of the answer, and a row that misses them stays in the table as a miss.
   */
  private static void goals(Options o, Report r, Optional<IoDrain.Row> best) {
    if (best.isEmpty() || !o.databases().contains(BenchDatabase.Kind.POSTGRESQL)) {
      return;
    }
    String d = BenchDatabase.Kind.POSTGRESQL.label;
    for (IoDrain.Row row : o.ioRows()) {
      if (row.kind() != IoDrain.Kind.ASYNC) {
        continue;
      }
      String k = key(d, row);
      String at = " at " + o.ioLatencyMs() + " ms (" + row.id() + ", 1 replica)";
      r.goals.add(
          new Report.Goal(d + ": io >= 10,000 tickets/s" + at, k, null, null, 10_000, true));
      r.goals.add(
          new Report.Goal(
              d + ": io fewer than 50 live threads" + at, k + ".threads", null, null, 49, false));
      for (IoDrain.Row peer : o.ioRows()) {
        if (peer.kind().peer()) {
          r.goals.add(
              new Report.Goal(
                  d + ": io >= 20x " + peer.id() + at, null, k, key(d, peer), 20, true));
        }
      }
    }
  }

  private static void notes(Options o, Report r) {
    r.notes.add(
        "io: each ticket is one POST (64-byte payload, Idempotency-Key) to an endpoint that"
            + " answers 200 after "
            + o.ioLatencyMs()
            + " ms, in a JVM of its own started by the bench (its threads, CPU and heap are not"
            + " counted here; its CPU is the summary's last column): "
            + (o.ioServer().equals(IoEndpoint.JETTY)
                ? "Jetty 12 core, 1 acceptor and "
                    + JettyEndpoint.SELECTORS
                    + " selectors, a non-blocking handler"
                : "the JDK's com.sun.net.httpserver, one dispatcher and "
                    + IoEndpoint.READERS
                    + " reader threads, every idle keep-alive connection kept")
            + ", "
            + IoEndpoint.TIMERS
            + " timer threads sending the answers when due, no thread held per request."
            + " Tickets/s from start() to an empty table; every ticket handled exactly once and"
            + " the endpoint served exactly the backlog (checked). 'of ideal' is tickets/s over"
            + " slots / latency.");
    r.notes.add(
        "io rows: engine = one replica, "
            + o.drainSettings().describe()
            + " except concurrency, HttpDelivery with its own client (HTTP/1.1, fixed executor of"
            + " max(4, 2 x cores) threads) and handlerConfig() (handler timeout = request timeout"
            + " 10 s + 2 s); platform = register() on the engine's pool of a platform thread per"
            + " slot; virtual = register() with virtualThreads(true); async = registerAsync() with"
            + " handleAsync (the JDK client's sendAsync). floor = the same handleAsync of messages"
            + " made up in memory, no engine, no database: what the client and the endpoint allow.");
    r.notes.add(
        "io peers: the same request with the JDK HttpClient.send (client set up as HttpDelivery's)"
            + " from a db-scheduler one-time task (threads(T); its default is 10, its published"
            + " benchmark ran 20 per instance; pool T + 3, lock-and-fetch polling as in the peers"
            + " workload) and from a transaction-outbox invocation (Submitter.withExecutor on a pool"
            + " of T threads; its default submitter is ForkJoinPool.commonPool(), one thread on 2"
            + " cores), T = --peer-threads ("
            + o.peerThreads()
            + ") unless the row names it. A peer does one request per worker thread at a time, so"
            + " its ceiling is T / latency; it drains --io-peer-n tickets (tickets/s is a rate).");
    r.notes.add(
        "io budget: a row's backlog is cut to what it would drain in "
            + IoDrain.ROW_BUDGET.toSeconds()
            + " s at its ideal rate (slots / latency), so no row runs for many minutes; the case"
            + " names the backlog drained.");
    r.notes.add(
        "io process figures (bench JVM only): peak live platform threads from the JVM's own peak"
            + " counter, reset after a System.gc() before the system under test is built (idle ="
            + " threads alive at that moment, under exec:java Maven's own included; virtual"
            + " threads are not platform threads and not counted); CPU = getProcessCpuTime() from"
            + " start() to the empty table, JIT and GC included; peak heap = used heap sampled"
            + " every 10 ms (mostly how far the young generation fills, and the collector sizes it"
            + " as the heap grows: read it with KiB/ticket, the bytes allocated by all threads over"
            + " the same window, and with the live heap, the largest heap in use right after a"
            + " collection during the drain, or after one forced at its end when none ran); fds"
            + " sampled every 100 ms. Open-file limit: "
            + ProcessMeter.maxFds()
            + " in the bench JVM (the JVM raises its soft limit to the hard one); a row that"
            + " needs more is refused with the limits named.");
  }
}
