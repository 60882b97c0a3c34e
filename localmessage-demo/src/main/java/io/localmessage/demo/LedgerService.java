package io.localmessage.demo;

import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.Backoff;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.http.HttpDelivery;
import io.localmessage.http.UrlResolver;
import io.localmessage.kafka.KafkaInboxConsumer;
import io.localmessage.spi.TracePropagation;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import tools.jackson.databind.JsonNode;

/**
 * The ledger service, in its own database: consumes {@code deposit.paid} through the inbox and
 * writes one ledger entry per deposit; in the same transaction it saves a {@code ledger.applied}
 * ticket that its own engine delivers over HTTP to the deposit service (the confirmation hop).
 */
final class LedgerService implements AutoCloseable {
  static final String CONSUMER = "ledger";
  static final String APPLIED = "ledger.applied";

  private final HikariDataSource pool;
  private final LocalMessages engine;
  private final HttpDelivery callback;
  private final KafkaInboxConsumer consumer;
  private final Thread rawLoop;
  private final AtomicBoolean running = new AtomicBoolean(true);
  final AtomicLong rawDeliveries = new AtomicLong();

  /** Inbox consumer meters: duplicates caught, applied, parked. */
  final io.micrometer.core.instrument.simple.SimpleMeterRegistry metrics =
      new io.micrometer.core.instrument.simple.SimpleMeterRegistry();

  LedgerService(Infra infra, DemoOptions options, String depositCallbackUrl, TraceRecorder traces)
      throws Exception {
    TracePropagation tracing = traces.service("ledger-service");
    this.pool = infra.pool(infra.ledgerUrl, "ledger", 12);
    LocalMessages.builder(pool)
        .table("ledger_message")
        .inboxTable("ledger_inbox")
        .autoCreateSchema(true)
        .build()
        .close();
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      // no unique key on deposit_id on purpose: the inbox alone must keep entries single, and
      // the reconciliation would see a double entry
      // published_ms: the record's timestamp (the relay's send, this JVM's clock); applied_ms:
      // when the handler ran, in the transaction that commits the entry
      st.execute(
          "CREATE TABLE IF NOT EXISTS ledger_entry (id VARCHAR(64) PRIMARY KEY,"
              + " deposit_id VARCHAR(64) NOT NULL, amount BIGINT NOT NULL,"
              + " applied_at TIMESTAMP(3) NOT NULL, published_ms BIGINT NOT NULL,"
              + " applied_ms BIGINT NOT NULL)");
    }
    this.callback =
        HttpDelivery.builder()
            .urlResolver(UrlResolver.fixed(URI.create(depositCallbackUrl)))
            .requestTimeout(Duration.ofSeconds(3))
            .tracing(tracing)
            .build();
    this.engine =
        LocalMessages.builder(pool)
            .table("ledger_message")
            .inboxTable("ledger_inbox")
            .replicaId("ledger-1")
            .concurrency(
                32) // confirmations in flight at once; the deposit side commits them in groups
            .pollInterval(Duration.ofMillis(200))
            .tracing(tracing)
            .build();
    engine.register(
        APPLIED,
        callback,
        callback
            .handlerConfig()
            .maxAttempts(50)
            .backoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(2)))
            .build());
    engine.start();

    Map<String, Object> props =
        Map.of(
            "bootstrap.servers",
            infra.bootstrap,
            "group.id",
            "ledger",
            "auto.offset.reset",
            "earliest");
    if (options.ledgerWithoutInbox) {
      this.consumer = null;
      this.rawLoop = new Thread(() -> consumeWithoutInbox(infra.bootstrap), "ledger-raw-consumer");
      this.rawLoop.start();
    } else {
      this.rawLoop = null;
      this.consumer =
          KafkaInboxConsumer.builder(pool, CONSUMER)
              .inboxTable("ledger_inbox")
              .consumerProperties(props)
              .topics(List.of(DepositService.TOPIC))
              .createTables(true)
              .meterRegistry(metrics)
              .tracing(tracing)
              .handler(this::apply)
              .build();
      consumer.start();
    }
  }

  private void apply(ConsumerRecord<byte[], byte[]> record, Connection c) throws SQLException {
    JsonNode event = PaymentChannel.JSON.readTree(record.value());
    String depositId = event.get("depositId").asString();
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO ledger_entry (id, deposit_id, amount, applied_at, published_ms,"
                + " applied_ms) VALUES (?, ?, ?, CURRENT_TIMESTAMP(3), ?, ?)")) {
      ps.setString(1, UUID.randomUUID().toString());
      ps.setString(2, depositId);
      ps.setLong(3, event.get("amount").asLong());
      ps.setLong(4, record.timestamp());
      ps.setLong(5, System.currentTimeMillis());
      ps.executeUpdate();
    }
    engine.save(
        c,
        NewMessage.action(APPLIED, "applied-" + depositId)
            .aggregateId(depositId)
            .payload("{\"depositId\":\"" + depositId + "\"}")
            .header("content-type", "application/json")
            .build());
  }

  /** The broken configuration: offsets auto-committed, no inbox, every delivery applied. */
  private void consumeWithoutInbox(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("group.id", "ledger-no-inbox");
    p.put("auto.offset.reset", "earliest");
    try (KafkaConsumer<byte[], byte[]> kc =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      kc.subscribe(List.of(DepositService.TOPIC));
      while (running.get()) {
        ConsumerRecords<byte[], byte[]> records = kc.poll(Duration.ofMillis(200));
        for (ConsumerRecord<byte[], byte[]> r : records) {
          rawDeliveries.incrementAndGet();
          try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            apply(r, c);
            c.commit();
          } catch (SQLException e) {
            System.err.println("ledger (no inbox) failed to apply: " + e);
          }
        }
      }
    }
  }

  DataSource dataSource() {
    return pool;
  }

  /**
   * Waits (up to {@code max}) until the ledger's consumer owns its partitions: a service takes
   * traffic once it is up, and a consumer group's first join (which creates the broker's offsets
   * topic) takes seconds that are not the flow's latency.
   */
  void awaitReady(Duration max) throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    while (consumer != null
        && consumer.assignment().isEmpty()
        && System.nanoTime() - deadline < 0) {
      java.util.concurrent.TimeUnit.MILLISECONDS.sleep(20); // start-up wait of the demo
    }
  }

  KafkaInboxConsumer consumer() {
    return consumer;
  }

  @Override
  public void close() throws InterruptedException {
    running.set(false);
    if (rawLoop != null) {
      rawLoop.join(10_000);
    }
    if (consumer != null) {
      consumer.close();
    }
    engine.close();
    callback.close();
  }
}
