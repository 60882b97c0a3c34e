package io.localmessage.kafka;

import io.localmessage.test.kafka.TestBroker;
import io.localmessage.test.kafka.Topics;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * What the inbox consumer tests share: a real database (one subclass per database), the shared
 * in-JVM broker, and a ledger table without a unique key, so a double application shows as two
 * rows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class InboxTestBase {
  static final String TYPE = "deposit.paid";

  protected TestDatabase db;
  protected DataSource ds;
  protected EngineFixture fx;
  protected TestBroker broker;
  protected String ledger;
  private final List<KafkaInboxConsumer> consumers = new ArrayList<>();
  private final List<KafkaRelay> relays = new ArrayList<>();

  protected abstract TestDatabase createDatabase();

  /** How many events the end-to-end test pushes through. */
  protected int endToEndCount() {
    return 10_000;
  }

  @BeforeAll
  void setUp() {
    db = createDatabase();
    ds = db.dataSource(12);
    broker = TestBroker.shared();
  }

  @AfterAll
  void tearDown() {
    db.close();
  }

  @BeforeEach
  void newTables() {
    fx = new EngineFixture(ds);
    ledger = fx.table + "_ledger";
    Sql.update(
        ds, "CREATE TABLE " + ledger + " (event_id VARCHAR(255) NOT NULL, amount INT NOT NULL)");
  }

  @AfterEach
  void stopAll() {
    consumers.forEach(KafkaInboxConsumer::close);
    consumers.clear();
    fx.close();
    relays.forEach(KafkaRelay::close);
    relays.clear();
  }

  // ------------------------------------------------------------------ helpers

  KafkaInboxConsumer.Builder consumer(String name, String topic) {
    return KafkaInboxConsumer.builder(ds, name)
        .consumerProperties(Map.of("bootstrap.servers", broker.bootstrapServers()))
        .topics(topic)
        .inboxTable(fx.table + "_inbox")
        .deadTable(fx.table + "_dead")
        .createTables(true)
        .pollTimeout(Duration.ofMillis(100))
        .closeTimeout(Duration.ofSeconds(5))
        .backoff(Duration.ofMillis(10), Duration.ofMillis(50));
  }

  KafkaInboxConsumer started(KafkaInboxConsumer.Builder b) {
    KafkaInboxConsumer c = b.build();
    consumers.add(c);
    return c.start();
  }

  /** Inserts the event's ledger row; the amount is the payload. */
  RecordHandler ledgerWriter() {
    return (record, c) -> insertLedger(c, Topics.header(record, RelayHeaders.EVENT_ID), record);
  }

  void insertLedger(Connection c, String eventId, ConsumerRecord<byte[], byte[]> r)
      throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO " + ledger + " (event_id, amount) VALUES (?, ?)")) {
      ps.setString(1, eventId);
      ps.setInt(2, amount(r));
      ps.executeUpdate();
    }
  }

  static int amount(ConsumerRecord<byte[], byte[]> r) {
    String v = Topics.text(r.value());
    return v.chars().allMatch(Character::isDigit) && !v.isEmpty() ? Integer.parseInt(v) : 0;
  }

  long ledgerRows() {
    return Sql.count(ds, "SELECT COUNT(*) FROM " + ledger);
  }

  long ledgerDistinct() {
    return Sql.count(ds, "SELECT COUNT(DISTINCT event_id) FROM " + ledger);
  }

  long ledgerRows(String eventId) {
    return Sql.count(ds, "SELECT COUNT(*) FROM " + ledger + " WHERE event_id = ?", eventId);
  }

  long deadRows() {
    return Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_dead");
  }

  long inboxRows() {
    return Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_inbox");
  }

  void send(KafkaProducer<byte[], byte[]> p, String topic, String key, String id, String value)
      throws Exception {
    ProducerRecord<byte[], byte[]> r =
        new ProducerRecord<>(
            topic,
            key == null ? null : key.getBytes(StandardCharsets.UTF_8),
            value.getBytes(StandardCharsets.UTF_8));
    r.headers().add(RelayHeaders.EVENT_ID, id.getBytes(StandardCharsets.UTF_8));
    r.headers().add(RelayHeaders.BIZ_TYPE, TYPE.getBytes(StandardCharsets.UTF_8));
    r.headers()
        .add(
            RelayHeaders.CREATED_AT,
            Long.toString(System.currentTimeMillis()).getBytes(StandardCharsets.UTF_8));
    p.send(r).get(30, TimeUnit.SECONDS);
  }

  /** Sends without waiting (flush the producer to wait); {@code partition} null = by key. */
  static void sendAsync(
      KafkaProducer<byte[], byte[]> p,
      String topic,
      Integer partition,
      String key,
      String id,
      String value) {
    ProducerRecord<byte[], byte[]> r =
        new ProducerRecord<>(
            topic,
            partition,
            key == null ? null : key.getBytes(StandardCharsets.UTF_8),
            value.getBytes(StandardCharsets.UTF_8));
    r.headers().add(RelayHeaders.EVENT_ID, id.getBytes(StandardCharsets.UTF_8));
    r.headers().add(RelayHeaders.BIZ_TYPE, TYPE.getBytes(StandardCharsets.UTF_8));
    p.send(
        r,
        (meta, error) -> {
          if (error != null) {
            SEND_FAILURES.merge(topic, id + ": " + error, (a, b) -> a + "; " + b);
          }
        });
  }

  /**
   * Sends of the test's own producer that failed, by topic (each test's topics are its own): a
   * record missing from the topic would make a test wait for a consumer that cannot reach it, so
   * the waits on committed offsets fail at once with the cause.
   */
  private static final Map<String, String> SEND_FAILURES =
      new java.util.concurrent.ConcurrentHashMap<>();

  private static void noSendFailed(String topic) {
    String failed = SEND_FAILURES.get(topic);
    if (failed != null) {
      throw new AssertionError("the test's producer lost records of " + topic + ": " + failed);
    }
  }

  /** The sum of the group's committed offsets of {@code topic}. */
  long committedSum(String group, String topic) {
    noSendFailed(topic);
    return Topics.committed(broker.bootstrapServers(), group, topic).values().stream()
        .mapToLong(Long::longValue)
        .sum();
  }

  /**
   * What a take-over looks like right now, for the message of a test that waited too long for one:
   * the group's state and members as the broker sees them, the committed offsets by partition and
   * the ledger's rows.
   */
  String groupState(String group, String topic) {
    StringBuilder sb = new StringBuilder("group ").append(group);
    try (org.apache.kafka.clients.admin.Admin admin =
        org.apache.kafka.clients.admin.Admin.create(
            Map.of("bootstrap.servers", broker.bootstrapServers()))) {
      var d =
          admin
              .describeConsumerGroups(List.of(group))
              .describedGroups()
              .get(group)
              .get(10, TimeUnit.SECONDS);
      sb.append(": state=").append(d.groupState()).append(" members=");
      d.members()
          .forEach(
              m ->
                  sb.append("[")
                      .append(m.clientId())
                      .append(" ")
                      .append(m.host())
                      .append(" ")
                      .append(m.assignment().topicPartitions())
                      .append("]"));
    } catch (Exception e) {
      sb.append(": not described (").append(e).append(")");
    }
    try {
      sb.append("; committed=").append(Topics.committed(broker.bootstrapServers(), group, topic));
    } catch (RuntimeException e) {
      sb.append("; committed not read (").append(e).append(")");
    }
    return sb.append("; ledger rows=").append(ledgerRows()).toString();
  }

  static double count(SimpleMeterRegistry r, String name) {
    var c = r.find("localmessage.inbox." + name).counter();
    return c == null ? 0 : c.count();
  }

  KafkaRelay relay() {
    KafkaRelay r = AbstractRelayTest.relayFor(broker.bootstrapServers());
    relays.add(r);
    return r;
  }

  /**
   * What business code on InnoDB does anyway: a transaction chosen as a deadlock victim (here by
   * the engine's claims and deletes next to the inserted rows) is run again.
   */
  static void retryingDeadlocks(Runnable tx) {
    for (int attempt = 1; ; attempt++) {
      try {
        tx.run();
        return;
      } catch (RuntimeException e) {
        Throwable t = e;
        boolean deadlock = false;
        while (t != null) {
          deadlock |= t instanceof java.sql.SQLException se && "40001".equals(se.getSQLState());
          t = t.getCause();
        }
        if (!deadlock || attempt == 5) {
          throw e;
        }
      }
    }
  }
}
