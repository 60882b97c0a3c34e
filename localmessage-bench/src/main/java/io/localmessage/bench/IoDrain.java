package io.localmessage.bench;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.Message;
import io.localmessage.MessageKind;
import io.localmessage.http.HttpDelivery;
import io.localmessage.http.HttpDeliveryBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The io workload's drains: a backlog of HTTP tickets, each one {@code POST} to the {@link
 * IoEndpoint} that answers after the configured latency, drained by the engine with {@link
 * HttpDelivery} (blocking on platform threads, blocking on virtual threads, asynchronous), by the
 * delivery alone with no engine and no database (the floor), and by db-scheduler and
 * transaction-outbox running the same blocking JDK {@code HttpClient.send}. Each drain is timed
 * from {@code start()} to an empty table, checked exactly once (every ticket handled once, the
 * endpoint served exactly the backlog), and metered by a {@link ProcessMeter}.
 */
final class IoDrain {
  static final String TYPE = "bench.http";

  /** A row's backlog is cut so that it would take at most this long at its ideal rate. */
  static final Duration ROW_BUDGET = Duration.ofSeconds(60);

  /** The drains of the workload. */
  enum Kind {
    PLATFORM("platform", "engine, blocking HttpDelivery on platform threads"),
    VIRTUAL("virtual", "engine, blocking HttpDelivery on virtual threads"),
    ASYNC("async", "engine, async HttpDelivery"),
    FLOOR("floor", "floor: async HttpDelivery alone (no engine, no database)"),
    DBSCHEDULER("dbscheduler", "db-scheduler 16.7.1, HttpClient.send"),
    OUTBOX("outbox", "transaction-outbox 4.2.268, HttpClient.send");

    final String id;
    final String label;

    Kind(String id, String label) {
      this.id = id;
      this.label = label;
    }

    boolean peer() {
      return this == DBSCHEDULER || this == OUTBOX;
    }

    boolean engine() {
      return this == PLATFORM || this == VIRTUAL || this == ASYNC;
    }
  }

  /**
   * One row: a kind, its slots (engine concurrency, requests the floor keeps in flight, or the
   * peer's worker threads) and, for the engine and floor rows, how many JDK clients the {@code
   * HttpDelivery} spreads its requests over ({@code HttpDeliveryBuilder.clients}).
   */
  record Row(Kind kind, int slots, int clients) {
    /**
     * {@code platform-64}, {@code async-5000}, {@code async-1000x2} (two HTTP clients), {@code
     * dbscheduler} (the peer threads), ...
     */
    static Row parse(String spec, int peerThreads) {
      String s = spec.trim().toLowerCase(Locale.ROOT);
      int clients = 1;
      int x = s.lastIndexOf('x');
      if (x > 0 && x > s.lastIndexOf('-') && Character.isDigit(s.charAt(x - 1))) {
        try {
          clients = Integer.parseInt(s.substring(x + 1));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("io row '" + spec + "': bad client count", e);
        }
        s = s.substring(0, x);
      }
      int dash = s.lastIndexOf('-');
      String name = dash < 0 ? s : s.substring(0, dash);
      Kind kind =
          Arrays.stream(Kind.values())
              .filter(k -> k.id.equals(name))
              .findFirst()
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "unknown io row '"
                              + spec
                              + "': platform-C, virtual-C, async-C, floor-C, dbscheduler[-T],"
                              + " outbox[-T]"));
      int slots;
      if (dash < 0) {
        if (!kind.peer()) {
          throw new IllegalArgumentException("io row '" + spec + "' needs its concurrency: -C");
        }
        slots = peerThreads;
      } else {
        try {
          slots = Integer.parseInt(s.substring(dash + 1).replace("_", ""));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("io row '" + spec + "': bad number", e);
        }
      }
      int max = kind.engine() ? LocalMessagesBuilder.MAX_CONCURRENCY : 20_000;
      if (slots < 1 || slots > max) {
        throw new IllegalArgumentException(
            "io row '" + spec + "': between 1 and " + max + ", was " + slots);
      }
      int maxClients = HttpDeliveryBuilder.MAX_CLIENTS;
      if (clients != 1 && (kind.peer() || clients < 1 || clients > maxClients)) {
        throw new IllegalArgumentException(
            "io row '"
                + spec
                + "': xK (HTTP clients, 1 to "
                + maxClients
                + ") is for engine and floor rows");
      }
      return new Row(kind, slots, clients);
    }

    String id() {
      return kind.id + "-" + slots + (clients == 1 ? "" : "x" + clients);
    }

    String label() {
      return kind.label
          + ", "
          + (kind.peer()
              ? slots + " threads"
              : kind == Kind.FLOOR ? slots + " in flight" : "concurrency " + slots)
          + (clients == 1 ? "" : ", " + clients + " HTTP clients");
    }

    /** The best rate it can reach: every slot busy with one request at a time. */
    double idealPerSecond(long latencyMs) {
      return slots * 1000.0 / latencyMs;
    }

    /** {@code wanted}, cut so that the row takes at most {@link #ROW_BUDGET} at its ideal rate. */
    int backlog(int wanted, long latencyMs) {
      long cap = (long) (idealPerSecond(latencyMs) * ROW_BUDGET.toSeconds());
      return (int) Math.max(1, Math.min(wanted, cap));
    }

    Duration timeout(int n, long latencyMs) {
      long ideal = (long) Math.ceil(n / idealPerSecond(latencyMs));
      return Drain.timeoutFor(n).plusSeconds(3 * ideal);
    }
  }

  /** One drain's figures: the drain, the mean HTTP round trip and the process readings. */
  record Result(Drain.Result drain, double meanRoundTripMs, ProcessMeter.Reading reading) {}

  private IoDrain() {}

  /** Whether this JVM can run the virtual-thread row. */
  static boolean virtualThreadsAvailable() {
    return Runtime.version().feature() >= 21;
  }

  static Result run(
      Scope scope, Row row, int n, IoEndpoint.Process endpoint, EngineDrain.Settings s)
      throws Exception {
    ProcessMeter meter = new ProcessMeter();
    LongAdder roundTrips = new LongAdder();
    Duration timeout = row.timeout(n, endpoint.latencyMs);
    Drain.Result d =
        switch (row.kind()) {
          case PLATFORM, VIRTUAL, ASYNC ->
              engine(scope, row, n, endpoint, s, timeout, meter, roundTrips);
          case FLOOR -> floor(row, n, endpoint, timeout, meter, roundTrips);
          case DBSCHEDULER -> {
            try (PeerClient client = new PeerClient(endpoint.uri())) {
              yield DbSchedulerDrain.run(
                  scope, n, row.slots(), key -> client.post(key, roundTrips), timeout, meter);
            }
          }
          case OUTBOX -> {
            AtomicInteger keys = new AtomicInteger();
            try (PeerClient client = new PeerClient(endpoint.uri())) {
              yield OutboxDrain.run(
                  scope,
                  n,
                  row.slots(),
                  () -> client.post("o-" + keys.incrementAndGet(), roundTrips),
                  timeout,
                  meter);
            }
          }
        };
    double rtt = d.handled() == 0 ? Double.NaN : roundTrips.sum() / 1e6 / d.handled();
    return new Result(d, rtt, meter.reading());
  }

  private static Drain.Result engine(
      Scope scope,
      Row row,
      int n,
      IoEndpoint.Process endpoint,
      EngineDrain.Settings s,
      Duration timeout,
      Drain.Meter meter,
      LongAdder roundTrips)
      throws Exception {
    Tickets.seed(scope, n, TYPE, endpoint.uri().toString());
    scope.closePools(); // the setup pool's thread is not the engine's
    long before = Drain.settledCommits(scope);
    LongAdder handled = new LongAdder();
    meter.reset();
    HttpDelivery http = HttpDelivery.builder().clients(row.clients()).build();
    LocalMessages lm = null;
    long monitorQueries;
    double seconds;
    try {
      LocalMessagesBuilder b =
          LocalMessages.builder(scope.pool("engine", s.poolSize()))
              .table(Tickets.TABLE)
              .replicaId("bench-io")
              .concurrency(row.slots())
              .writeBatchSize(s.writeBatchSize())
              .pollInterval(s.pollInterval());
      if (row.kind() == Kind.VIRTUAL) {
        b.virtualThreads(true);
      }
      lm = b.build();
      HandlerConfig config = http.handlerConfig().build();
      if (row.kind() == Kind.ASYNC) {
        lm.registerAsync(
            TYPE,
            m -> {
              long t = System.nanoTime();
              return http.handleAsync(m)
                  .thenRun(
                      () -> {
                        roundTrips.add(System.nanoTime() - t);
                        handled.increment();
                      });
            },
            config);
      } else {
        lm.register(
            TYPE,
            m -> {
              long t = System.nanoTime();
              http.handle(m);
              roundTrips.add(System.nanoTime() - t);
              handled.increment();
            },
            config);
      }
      long t0 = System.nanoTime();
      meter.started();
      lm.start();
      monitorQueries = Drain.awaitEmpty(handled, n, scope, Tickets.TABLE, timeout, meter);
      seconds = (System.nanoTime() - t0) / 1e9;
      meter.drained();
    } finally {
      if (lm != null) {
        lm.close();
      }
      http.close(); // on Java 21+ also its clients' selector threads and connections
      scope.closePools();
    }
    long after = Drain.settledCommits(scope);
    return new Drain.Result(
        n, handled.sum(), seconds, Drain.commitsPer1k(before, after, monitorQueries, n));
  }

  /**
   * The same deliveries with no engine and no database: {@code handleAsync} of {@code n} messages
   * made up in memory, {@code inFlight} at a time, from this thread. What the client and the
   * endpoint allow on this machine.
   */
  private static Drain.Result floor(
      Row row,
      int n,
      IoEndpoint.Process endpoint,
      Duration timeout,
      Drain.Meter meter,
      LongAdder roundTrips)
      throws Exception {
    LongAdder handled = new LongAdder();
    LongAdder failed = new LongAdder();
    AtomicReference<Throwable> firstError = new AtomicReference<>();
    int inFlight = row.slots();
    Semaphore permits = new Semaphore(inFlight);
    String destination = endpoint.uri().toString();
    meter.reset();
    HttpDelivery http = HttpDelivery.builder().clients(row.clients()).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    double seconds;
    try {
      long t0 = System.nanoTime();
      meter.started();
      long nextTick = t0;
      for (int i = 1; i <= n; i++) {
        while (!permits.tryAcquire(Drain.TICK_NANOS, TimeUnit.NANOSECONDS)) {
          meter.tick();
          if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("floor timed out after " + timeout);
          }
        }
        if (System.nanoTime() - nextTick >= 0) {
          meter.tick();
          nextTick = System.nanoTime() + Drain.TICK_NANOS;
        }
        long t = System.nanoTime();
        http.handleAsync(new FloorMessage(i, destination))
            .whenComplete(
                (v, e) -> {
                  if (e == null) {
                    roundTrips.add(System.nanoTime() - t);
                    handled.increment();
                  } else {
                    firstError.compareAndSet(null, e);
                    failed.increment();
                  }
                  permits.release();
                });
      }
      while (handled.sum() + failed.sum() < n) {
        meter.tick();
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException("floor timed out after " + timeout);
        }
        TimeUnit.MILLISECONDS.sleep(1);
      }
      seconds = (System.nanoTime() - t0) / 1e9;
      meter.drained();
    } finally {
      http.close(); // on Java 21+ also its clients' selector threads and connections
    }
    if (failed.sum() > 0) {
      throw new IllegalStateException(
          failed.sum() + " floor deliveries failed, first: " + firstError.get());
    }
    return new Drain.Result(n, handled.sum(), seconds, Double.NaN);
  }

  /** {@code HttpClient.shutdownNow()} where it exists (Java 21+). */
  static void shutdownNow(HttpClient client) {
    try {
      HttpClient.class.getMethod("shutdownNow").invoke(client);
    } catch (ReflectiveOperationException e) {
      // Java 17: the selector thread ends once the client is unreachable
    }
  }

  /** A message of the floor: what a claimed HTTP ticket looks like to the delivery. */
  private record FloorMessage(long id, String destination) implements Message {
    private static final byte[] PAYLOAD = ticketPayload();

    @Override
    public MessageKind kind() {
      return MessageKind.ACTION;
    }

    @Override
    public String bizType() {
      return TYPE;
    }

    @Override
    public String idemKey() {
      return "f-" + id;
    }

    @Override
    public String aggregateId() {
      return null;
    }

    @Override
    public byte[] payload() {
      return PAYLOAD;
    }

    @Override
    public Map<String, String> headers() {
      return Map.of();
    }

    @Override
    public int attempt() {
      return 1;
    }

    @Override
    public int maxAttempts() {
      return 10;
    }

    @Override
    public Instant createdAt() {
      return Instant.EPOCH;
    }
  }

  static byte[] ticketPayload() {
    byte[] p = new byte[Tickets.PAYLOAD_BYTES];
    Arrays.fill(p, (byte) 'x');
    return p;
  }

  /**
   * The peers' HTTP call: what a db-scheduler task or a transaction-outbox method would write, the
   * JDK {@code HttpClient.send} of the same request (POST of the 64-byte payload, {@code
   * Idempotency-Key}, JSON content type, 10 s timeout), a non-2xx status an exception. The client
   * is set up as {@link HttpDelivery}'s own (HTTP/1.1, a small fixed executor of max(4, 2 x cores)
   * threads instead of the JDK's default cached pool), so both sides pay the same threads for it.
   */
  static final class PeerClient implements AutoCloseable {
    private static final byte[] PAYLOAD = ticketPayload();
    private final URI uri;
    private ThreadPoolExecutor executor;
    private HttpClient client;

    PeerClient(URI uri) {
      this.uri = uri;
    }

    /** Built at the first call, inside the measured window, as the engine's delivery is. */
    private synchronized HttpClient client() {
      if (client == null) {
        int size = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
        AtomicInteger names = new AtomicInteger();
        executor =
            new ThreadPoolExecutor(
                size,
                size,
                60,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                r -> {
                  Thread t = new Thread(r, "bench-peer-http-" + names.incrementAndGet());
                  t.setDaemon(true);
                  return t;
                });
        executor.allowCoreThreadTimeOut(true);
        client =
            HttpClient.newBuilder()
                .executor(executor)
                .connectTimeout(HttpDelivery.DEFAULT_CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .version(HttpClient.Version.HTTP_1_1)
                .build();
      }
      return client;
    }

    void post(String idemKey, LongAdder roundTrips) {
      HttpRequest request =
          HttpRequest.newBuilder(uri)
              .timeout(HttpDelivery.DEFAULT_REQUEST_TIMEOUT)
              .POST(HttpRequest.BodyPublishers.ofByteArray(PAYLOAD))
              .header(HttpDelivery.IDEMPOTENCY_KEY_HEADER, idemKey)
              .header("Content-Type", HttpDelivery.DEFAULT_CONTENT_TYPE)
              .build();
      HttpClient c = client();
      long t = System.nanoTime();
      HttpResponse<Void> response;
      try {
        response = c.send(request, HttpResponse.BodyHandlers.discarding());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
      if (response.statusCode() / 100 != 2) {
        throw new IllegalStateException("HTTP " + response.statusCode());
      }
      roundTrips.add(System.nanoTime() - t);
    }

    @Override
    public synchronized void close() {
      if (client != null) {
        shutdownNow(client);
      }
      if (executor != null) {
        executor.shutdownNow();
      }
    }
  }
}
