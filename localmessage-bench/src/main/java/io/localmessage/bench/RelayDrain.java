package io.localmessage.bench;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.kafka.KafkaRelay;
import io.localmessage.spi.EngineListener;
import io.localmessage.test.kafka.TestBroker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Workload 7, the Kafka relay: a backlog of EVENT tickets drained by {@link KafkaRelay} into a
 * local single-node KRaft broker ({@link TestBroker}, in this JVM) with {@code acks=all} and the
 * idempotent producer. A drain counts only when every ticket is gone from the table and the topic's
 * end offsets add up to at least the backlog.
 */
final class RelayDrain {
  static final String TYPE = "bench.event";
  static final int PARTITIONS = 6;
  private static final AtomicInteger TOPICS = new AtomicInteger();

  private static TestBroker broker;

  private RelayDrain() {}

  /**
   * The run's broker (also the consumer workload's), started at first use; its threads would keep
   * the JVM alive: see stop.
   */
  static synchronized TestBroker broker() {
    if (broker == null) {
      broker = TestBroker.start(PARTITIONS, Map.of("auto.create.topics.enable", false));
    }
    return broker;
  }

  /** Stops the broker if one was started. */
  static synchronized void stopBroker() {
    if (broker != null) {
      broker.close();
      broker = null;
    }
  }

  /** Engine and producer settings of the relay drain; printed with the results. */
  record Settings(int concurrency, int batchSize, int poolSize, int producerBatchBytes) {
    String describe() {
      return "engine concurrency="
          + concurrency
          + " (tickets in flight) pool="
          + poolSize
          + ", relay batchSize="
          + batchSize
          + " tickets per handler call, producer acks=all idempotent linger.ms=5 batch.size="
          + producerBatchBytes
          + ", topic of "
          + PARTITIONS
          + " partitions keyed by 1,000 aggregates";
    }
  }

  static Drain.Result run(Scope scope, int n, Settings s) throws Exception {
    TestBroker broker = broker();
    String topic = "bench-relay-" + TOPICS.incrementAndGet() + "-" + System.nanoTime();
    broker.createTopic(topic, PARTITIONS);
    Tickets.createSchema(scope);
    seedEvents(scope, n, topic);
    LongAdder handled = new LongAdder();
    EngineListener counting =
        new EngineListener() {
          @Override
          public void delivered(
              String bizType,
              Result result,
              int attempt,
              Duration handlerTime,
              Duration sinceCreated) {
            if (result == Result.SUCCESS) {
              handled.increment();
            }
          }
        };
    double seconds;
    try (KafkaRelay relay =
        KafkaRelay.builder()
            .producerProperties(
                Map.of(
                    "bootstrap.servers",
                    broker.bootstrapServers(),
                    "batch.size",
                    s.producerBatchBytes()))
            .build()) {
      LocalMessages lm =
          LocalMessages.builder(scope.pool("relay", s.poolSize()))
              .table(Tickets.TABLE)
              .replicaId("bench-relay")
              .concurrency(s.concurrency())
              .writeBatchSize(Math.max(500, s.batchSize()))
              .pollInterval(Duration.ofMillis(500))
              .listener(counting)
              .build();
      try {
        relay.register(lm, TYPE, HandlerConfig.builder().batchSize(s.batchSize()).build());
      } catch (RuntimeException e) {
        lm.close();
        throw e;
      }
      seconds = Drain.timeOne(lm, handled, n, scope);
    }
    long onTopic = broker.recordCount(topic);
    if (onTopic < n) {
      throw new IllegalStateException(
          "relay drain: only " + onTopic + " of " + n + " records on " + topic);
    }
    return new Drain.Result(n, handled.sum(), seconds, Double.NaN);
  }

  /**
   * Loads {@code n} due EVENT tickets for {@code topic}, keyed by 1,000 aggregates (PostgreSQL).
   */
  private static void seedEvents(Scope scope, int n, String topic) throws SQLException {
    try (Connection c = scope.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO "
                    + Tickets.TABLE
                    + " (kind, biz_type, idem_key, aggregate_id, destination, payload,"
                    + " max_attempts, status, attempts, version, next_retry_at, created_at,"
                    + " updated_at) SELECT 2, ?, 'e-' || g, 'acct-' || (g % 1000), ?, ?, 10, 0,"
                    + " 0, 0, now() - interval '1 second', now(), now()"
                    + " FROM generate_series(1, ?) g")) {
      byte[] payload = new byte[Tickets.PAYLOAD_BYTES];
      java.util.Arrays.fill(payload, (byte) 'x');
      ps.setString(1, TYPE);
      ps.setString(2, topic);
      ps.setBytes(3, payload);
      ps.setInt(4, n);
      ps.executeUpdate();
    }
    scope.analyze(Tickets.TABLE);
  }
}
