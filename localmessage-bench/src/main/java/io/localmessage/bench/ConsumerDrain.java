package io.localmessage.bench;

import io.localmessage.kafka.KafkaInboxConsumer;
import io.localmessage.kafka.RelayHeaders;
import io.localmessage.test.kafka.TestBroker;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Workload 8, the consumer side: a topic of 6 partitions preloaded with relayed events (headers
 * {@code lm-event-id} and {@code lm-biz-type}, 64-byte payload, keyed by 1,000 aggregates) applied
 * into the database by {@link KafkaInboxConsumer}s of one group, each record's effect one small
 * insert ({@code bench_effect}); and the floor of the same statements on plain JDBC without Kafka.
 * A run counts only when the effect table holds every event exactly once.
 */
final class ConsumerDrain {
  static final String TYPE = "bench.event";
  static final int PARTITIONS = 6;
  static final String EFFECT = "bench_effect";
  private static final String NAME = "bench";
  private static final Map<Integer, String> TOPICS = new HashMap<>();
  private static final AtomicInteger GROUPS = new AtomicInteger();

  private ConsumerDrain() {}

  /**
   * Consumer settings; {@code batchSize 1, concurrency 1} is the one-record-per-transaction mode.
   */
  record Settings(int batchSize, int concurrency) {
    String describe() {
      return "batchSize=" + batchSize + " concurrency=" + concurrency;
    }
  }

  /** How the floor records the inbox rows. */
  enum Inbox {
    /** The consumer's own statements: one multi-row inbox insert per 100 records. */
    BULK,
    /** The textbook way: one inbox insert per record, as the core's {@code Inbox.tryRecord}. */
    ROW
  }

  /** The run's topic of {@code n} events, loaded once and shared by every measurement. */
  static synchronized String topic(int n) {
    return TOPICS.computeIfAbsent(n, ConsumerDrain::load);
  }

  /**
   * Loads a fresh topic of {@code n} events. Every send is awaited: a record the broker refused (a
   * slow broker on a loaded machine times a batch out) is a load that failed, never a silent gap in
   * the topic; such a load is retried on a new topic, and the last cause is reported.
   */
  private static String load(int n) {
    IllegalStateException last = null;
    for (int attempt = 1; attempt <= 3; attempt++) {
      try {
        return loadOnce(n);
      } catch (IllegalStateException e) {
        last = e;
        System.err.println("bench: " + e.getMessage() + " (attempt " + attempt + " of 3)");
      }
    }
    throw last;
  }

  private static String loadOnce(int n) {
    TestBroker broker = RelayDrain.broker();
    String topic = "bench-consumer-" + n + "-" + System.nanoTime();
    broker.createTopic(topic, PARTITIONS);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 262_144);
    byte[] payload = new byte[Tickets.PAYLOAD_BYTES];
    java.util.Arrays.fill(payload, (byte) 'x');
    byte[] type = TYPE.getBytes(StandardCharsets.UTF_8);
    List<Future<RecordMetadata>> sends = new ArrayList<>(n);
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = 1; i <= n; i++) {
        ProducerRecord<byte[], byte[]> r =
            new ProducerRecord<>(
                topic, ("acct-" + i % 1000).getBytes(StandardCharsets.UTF_8), payload);
        r.headers().add(RelayHeaders.EVENT_ID, ("e-" + i).getBytes(StandardCharsets.UTF_8));
        r.headers().add(RelayHeaders.BIZ_TYPE, type);
        sends.add(producer.send(r));
      }
      producer.flush();
    }
    int failed = 0;
    Throwable cause = null;
    for (Future<RecordMetadata> f : sends) {
      try {
        f.get(0, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("preloading " + topic + " was interrupted", e);
      } catch (ExecutionException | TimeoutException e) {
        failed++;
        cause = cause == null ? (e.getCause() == null ? e : e.getCause()) : cause;
      }
    }
    long on = broker.recordCount(topic);
    if (failed > 0 || on != n) {
      throw new IllegalStateException(
          "preloading "
              + topic
              + ": "
              + on
              + " of "
              + n
              + " records on the topic, "
              + failed
              + " sends failed"
              + (cause == null ? "" : ", first: " + cause));
    }
    return topic;
  }

  private static void createEffectTable(Scope scope) {
    scope.exec("CREATE TABLE " + EFFECT + " (event_id VARCHAR(255) NOT NULL, amount INT NOT NULL)");
  }

  /** {@code instances} consumers of one new group apply the topic of {@code n} events. */
  static Drain.Result consumers(Scope scope, int n, int instances, Settings s) throws Exception {
    String topic = topic(n);
    createEffectTable(scope);
    String group = "bench-" + GROUPS.incrementAndGet() + "-" + scope.name;
    LongAdder handled = new LongAdder();
    List<KafkaInboxConsumer> consumers = new ArrayList<>();
    long before = Drain.settledCommits(scope);
    long monitorQueries;
    double seconds;
    try {
      for (int i = 1; i <= instances; i++) {
        DataSource pool = scope.pool("consumer-" + i, s.concurrency() + 1);
        consumers.add(
            KafkaInboxConsumer.builder(pool, NAME)
                .consumerProperties(
                    Map.of(
                        "bootstrap.servers",
                        RelayDrain.broker().bootstrapServers(),
                        "group.id",
                        group,
                        "client.id",
                        group + "-" + i))
                .topics(topic)
                .createTables(i == 1)
                .purgeInterval(Duration.ZERO)
                .batchSize(s.batchSize())
                .concurrency(s.concurrency())
                .handler(
                    (record, c) -> {
                      try (PreparedStatement ps =
                          c.prepareStatement(
                              "INSERT INTO " + EFFECT + " (event_id, amount) VALUES (?, ?)")) {
                        ps.setString(
                            1,
                            new String(
                                record.headers().lastHeader(RelayHeaders.EVENT_ID).value(),
                                StandardCharsets.UTF_8));
                        ps.setInt(2, record.value().length);
                        ps.executeUpdate();
                      }
                      handled.increment();
                    })
                .build());
      }
      long t0 = System.nanoTime();
      consumers.forEach(KafkaInboxConsumer::start);
      // handler calls can count a batch twice (rolled back, then applied): the table decides
      monitorQueries = awaitRows(scope, handled, n, Drain.timeoutFor(n));
      seconds = (System.nanoTime() - t0) / 1e9;
    } finally {
      consumers.forEach(KafkaInboxConsumer::close);
      scope.closePools();
    }
    long after = Drain.settledCommits(scope);
    checkExactlyOnce(scope, n);
    return new Drain.Result(n, n, seconds, Drain.commitsPer1k(before, after, monitorQueries, n));
  }

  /** Waits until {@code handled} reaches {@code n}, then until the effect table holds n rows. */
  private static long awaitRows(Scope scope, LongAdder handled, long n, Duration timeout)
      throws SQLException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (handled.sum() < n) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "consumer drain timed out after " + timeout + ": handled " + handled.sum());
      }
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
    long queries = 0;
    try (Connection c = scope.connect()) {
      while (true) {
        queries++;
        long rows = Scope.count(c, EFFECT);
        if (rows >= n) {
          return queries;
        }
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "consumer drain timed out after " + timeout + ": " + rows + " of " + n + " rows");
        }
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
      }
    }
  }

  private static void checkExactlyOnce(Scope scope, long n) throws SQLException {
    try (Connection c = scope.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT COUNT(*), COUNT(DISTINCT event_id) FROM " + EFFECT)) {
      rs.next();
      if (rs.getLong(1) != n || rs.getLong(2) != n) {
        throw new IllegalStateException(
            "effects: " + rs.getLong(1) + " rows, " + rs.getLong(2) + " distinct for " + n);
      }
    }
  }

  /**
   * The floor: {@code threads} threads, one connection each, apply the same {@code n} events with
   * the consumer's statements (inbox rows, then one effect insert per record, one commit per {@code
   * batch}), no Kafka and no library.
   */
  static Drain.Result floor(Scope scope, int n, int threads, int batch, Inbox inbox)
      throws Exception {
    createEffectTable(scope);
    scope.exec(
        scope.isPostgres()
            ? "CREATE TABLE local_inbox (consumer VARCHAR(64) NOT NULL, message_id VARCHAR(255)"
                + " NOT NULL, received_at TIMESTAMPTZ(3) NOT NULL, PRIMARY KEY (consumer,"
                + " message_id))"
            : "CREATE TABLE local_inbox (consumer VARBINARY(256) NOT NULL, message_id"
                + " VARBINARY(1020) NOT NULL, received_at DATETIME(3) NOT NULL, PRIMARY KEY"
                + " (consumer, message_id))");
    long before = Drain.settledCommits(scope);
    DataSource pool = scope.pool("floor", threads);
    AtomicInteger names = new AtomicInteger();
    ExecutorService exec =
        Executors.newFixedThreadPool(
            threads, r -> new Thread(r, "bench-consumer-floor-" + names.incrementAndGet()));
    double seconds;
    try {
      List<Future<?>> futures = new ArrayList<>();
      long t0 = System.nanoTime();
      for (int t = 0; t < threads; t++) {
        int lane = t;
        futures.add(
            exec.submit(
                () -> {
                  try (Connection c = pool.getConnection()) {
                    applyShare(c, scope.isPostgres(), n, threads, lane, batch, inbox);
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get(Drain.timeoutFor(n).toMillis(), TimeUnit.MILLISECONDS);
      }
      seconds = (System.nanoTime() - t0) / 1e9;
    } finally {
      exec.shutdownNow();
      exec.awaitTermination(10, TimeUnit.SECONDS);
      scope.closePools();
    }
    long after = Drain.settledCommits(scope);
    checkExactlyOnce(scope, n);
    return new Drain.Result(n, n, seconds, Drain.commitsPer1k(before, after, 0, n));
  }

  /** Events {@code lane, lane + threads, ...} of 1..n, in transactions of {@code batch}. */
  private static void applyShare(
      Connection c, boolean pg, int n, int threads, int lane, int batch, Inbox inbox)
      throws SQLException {
    c.setAutoCommit(false);
    String one =
        pg
            ? "INSERT INTO local_inbox (consumer, message_id, received_at) VALUES (?, ?, now())"
                + " ON CONFLICT (consumer, message_id) DO NOTHING"
            : "INSERT INTO local_inbox (consumer, message_id, received_at) VALUES (?, ?,"
                + " UTC_TIMESTAMP(3))";
    List<String> ids = new ArrayList<>();
    for (int i = lane + 1; i <= n; i += threads) {
      ids.add(TYPE + ":e-" + i);
    }
    for (int from = 0; from < ids.size(); from += batch) {
      List<String> tx = ids.subList(from, Math.min(ids.size(), from + batch));
      for (int chunk = 0; chunk < tx.size(); chunk += 100) {
        List<String> part = tx.subList(chunk, Math.min(tx.size(), chunk + 100));
        if (inbox == Inbox.BULK) {
          bulkInbox(c, pg, part);
        }
        for (String id : part) {
          if (inbox == Inbox.ROW) {
            try (PreparedStatement ps = c.prepareStatement(one)) {
              ps.setString(1, NAME);
              ps.setString(2, id);
              ps.executeUpdate();
            }
          }
          try (PreparedStatement ps =
              c.prepareStatement("INSERT INTO " + EFFECT + " (event_id, amount) VALUES (?, ?)")) {
            ps.setString(1, id.substring(TYPE.length() + 1));
            ps.setInt(2, Tickets.PAYLOAD_BYTES);
            ps.executeUpdate();
          }
        }
      }
      c.commit();
    }
  }

  /** The consumer's inbox statement for a chunk (sorted ids, as the consumer sends them). */
  private static void bulkInbox(Connection c, boolean pg, List<String> ids) throws SQLException {
    List<String> sorted = new ArrayList<>(ids);
    java.util.Collections.sort(sorted);
    if (pg) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO local_inbox (consumer, message_id, received_at) SELECT ?, u.id, now()"
                  + " FROM unnest(?::varchar[]) WITH ORDINALITY AS u(id, n) ORDER BY u.n"
                  + " ON CONFLICT (consumer, message_id) DO NOTHING RETURNING message_id")) {
        ps.setString(1, NAME);
        ps.setArray(2, c.createArrayOf("varchar", sorted.toArray()));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            rs.getString(1);
          }
        }
      }
      return;
    }
    StringBuilder sql =
        new StringBuilder("INSERT INTO local_inbox (consumer, message_id, received_at) VALUES ");
    for (int i = 0; i < sorted.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append("(?, ?, UTC_TIMESTAMP(3))");
    }
    try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
      int p = 1;
      for (String id : sorted) {
        ps.setString(p++, NAME);
        ps.setString(p++, id);
      }
      ps.executeUpdate();
    }
  }
}
