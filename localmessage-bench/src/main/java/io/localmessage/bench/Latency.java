package io.localmessage.bench;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * Commit-to-handler-start latency under a fixed arrival rate. Producers run business transactions
 * (one order row plus one message) on a schedule of {@code rate} per second, open loop, and note
 * the time right after the commit; the handler notes when it starts. Fast path on: the producer
 * calls {@code dispatchNow(id)} right after its commit (what {@code inTransaction} and the Spring
 * starter do). Off: only the poller finds the messages.
 *
 * <p>Split deployment: the producer's engine registers no handler and never starts (an API service
 * that saves what a worker service delivers); two worker replicas run the handler. The producer
 * calls {@code dispatchNow} after each commit, which with wake-ups on becomes one coalesced
 * PostgreSQL {@code NOTIFY}; with them off the workers find the messages by polling.
 */
final class Latency {
  static final String TYPE = "bench.latency";
  static final int PRODUCERS = 8;

  private Latency() {}

  /** Percentiles in milliseconds, the achieved rate, and how many messages were measured. */
  record Result(double p50, double p95, double p99, double max, double achievedRate, int tickets) {}

  static Result run(
      Scope scope, int rate, Duration duration, boolean fastPath, EngineDrain.Settings s)
      throws Exception {
    return run(scope, rate, duration, fastPath, false, s);
  }

  /** {@code split}: a producer without handlers and two worker replicas; {@code wake}: wake-ups. */
  static Result split(
      Scope scope, int rate, Duration duration, boolean wake, EngineDrain.Settings s)
      throws Exception {
    return run(scope, rate, duration, wake, true, s);
  }

  private static Result run(
      Scope scope,
      int rate,
      Duration duration,
      boolean fastPath,
      boolean split,
      EngineDrain.Settings s)
      throws Exception {
    Tickets.createSchema(scope);
    Business.createSchema(scope);
    int total = (int) Math.max(1, rate * duration.toMillis() / 1000);
    DataSource pool = scope.pool("latency", PRODUCERS + s.poolSize());
    Map<Long, Long> committedAt = new ConcurrentHashMap<>(total * 2);
    Map<Long, Long> startedAt = new ConcurrentHashMap<>(total * 2);
    LongAdder handled = new LongAdder();
    List<LocalMessages> workers = new ArrayList<>();
    for (int w = 0; w < (split ? 2 : 1); w++) {
      LocalMessages worker =
          LocalMessages.builder(split ? scope.pool("latency-worker-" + w, s.poolSize() + 1) : pool)
              .table(Tickets.TABLE)
              .replicaId("bench-latency-" + w)
              .concurrency(s.concurrency())
              .writeBatchSize(s.writeBatchSize())
              // a split deployment runs on the default poll interval, as a new user's would
              .pollInterval(split ? LocalMessagesBuilder.DEFAULT_POLL_INTERVAL : s.pollInterval())
              .wakeUps(!split || fastPath)
              .build();
      worker.register(
          TYPE,
          m -> {
            startedAt.put(m.id(), System.nanoTime());
            handled.increment();
          },
          HandlerConfig.defaults());
      workers.add(worker);
    }
    // the producer: in a split deployment a separate engine that handles nothing
    LocalMessages lm =
        split
            ? LocalMessages.builder(pool)
                .table(Tickets.TABLE)
                .replicaId("bench-producer")
                .wakeUps(fastPath)
                .build()
            : workers.get(0);
    byte[] payload = new byte[Tickets.PAYLOAD_BYTES];
    Arrays.fill(payload, (byte) 'x');
    AtomicInteger names = new AtomicInteger();
    ExecutorService producers =
        Executors.newFixedThreadPool(
            PRODUCERS, r -> new Thread(r, "bench-producer-" + names.incrementAndGet()));
    AtomicLong next = new AtomicLong();
    AtomicLong lastCommit = new AtomicLong();
    long period = 1_000_000_000L / rate;
    try {
      workers.forEach(LocalMessages::start);
      long t0 = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
      List<Future<?>> futures = new ArrayList<>();
      for (int p = 0; p < PRODUCERS; p++) {
        futures.add(
            producers.submit(
                () -> {
                  try (Connection c = pool.getConnection()) {
                    c.setAutoCommit(false);
                    long i;
                    while ((i = next.getAndIncrement()) < total) {
                      long due = t0 + i * period;
                      long wait;
                      while ((wait = due - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                      }
                      Business.insertOrder(c, "c-" + (i % 1000), i);
                      SaveResult r =
                          lm.save(
                              c,
                              NewMessage.action(TYPE, "lat-" + i)
                                  .aggregateId("c-" + (i % 1000))
                                  .payload(payload)
                                  .build());
                      c.commit();
                      long now = System.nanoTime();
                      committedAt.put(r.id(), now);
                      lastCommit.accumulateAndGet(now, Math::max);
                      if (fastPath) {
                        lm.dispatchNow(List.of(r.id()));
                      }
                    }
                    c.setAutoCommit(true);
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get(duration.toMillis() * 4 + 60_000, TimeUnit.MILLISECONDS);
      }
      // every handler ran and every outcome is written back before the engine closes: a run
      // whose write-backs fall behind the arrivals must not hand its backlog to the next one
      Drain.awaitEmpty(handled, total, scope, Tickets.TABLE, Duration.ofSeconds(120));
      double[] ms = new double[total];
      int k = 0;
      for (Map.Entry<Long, Long> e : committedAt.entrySet()) {
        Long started = startedAt.get(e.getKey());
        // a handler can start a hair before its producer reads the clock after the commit
        ms[k++] = started == null ? Double.NaN : Math.max(0, started - e.getValue()) / 1e6;
      }
      if (k != total || handled.sum() != total) {
        throw new IllegalStateException(
            "latency run: " + k + " commits, " + handled.sum() + " handled, expected " + total);
      }
      Arrays.sort(ms);
      double achieved = total / ((lastCommit.get() - t0) / 1e9);
      return new Result(
          Stats.percentile(ms, 0.50),
          Stats.percentile(ms, 0.95),
          Stats.percentile(ms, 0.99),
          ms[ms.length - 1],
          achieved,
          total);
    } finally {
      producers.shutdownNow();
      producers.awaitTermination(10, TimeUnit.SECONDS);
      lm.close();
      workers.forEach(LocalMessages::close);
      scope.closePools();
    }
  }
}
