package io.localmessage.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.test.kafka.TestBroker;
import io.localmessage.test.kafka.Topics;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The relay against a real broker (topics are not auto-created) and a real database, one subclass
 * per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractRelayTest {
  static final String TYPE = "deposit.paid";

  protected TestDatabase db;
  protected DataSource ds;
  protected EngineFixture fx;
  protected TestBroker broker;
  protected KafkaRelay relay;

  protected abstract TestDatabase createDatabase();

  @BeforeAll
  void setUp() {
    db = createDatabase();
    ds = db.dataSource(8);
    broker = TestBroker.shared();
    relay = relayFor(broker.bootstrapServers());
  }

  @AfterAll
  void tearDown() {
    relay.close();
    db.close();
  }

  @BeforeEach
  void newTable() {
    fx = new EngineFixture(ds);
  }

  @AfterEach
  void stopEngines() {
    fx.close();
  }

  /** A relay with short producer timeouts, so retries happen within a test. */
  static KafkaRelay relayFor(String bootstrap) {
    return KafkaRelay.builder()
        .producerProperties(Map.of("bootstrap.servers", bootstrap))
        .deliveryTimeout(Duration.ofSeconds(3))
        .maxBlock(Duration.ofSeconds(1))
        .build();
  }

  /** Handler settings that fit the relay above (7 s needed) and the engines below (10 s lease). */
  static HandlerConfig.Builder relayConfig() {
    return EngineFixture.config().handlerTimeout(Duration.ofSeconds(8)).maxAttempts(100);
  }

  LocalMessages engine(int concurrency) {
    return fx.build(
        fx.builder()
            .lease(Duration.ofSeconds(10))
            .concurrency(concurrency)
            .maxPayloadBytes(2 * 1024 * 1024));
  }

  private static NewMessage.Builder event(String key, String topic) {
    return NewMessage.event(TYPE, key).destination(topic).payload("{\"key\":\"" + key + "\"}");
  }

  @Test
  void publishesKeyedRecordsWithHeadersInAggregateOrder() throws Exception {
    String topic = Topics.unique("deposits");
    broker.createTopic(topic, 3);
    LocalMessages lm = engine(40);
    relay.register(lm, TYPE, relayConfig().ordered(true).batchSize(40).build());
    int aggregates = 10;
    int perAggregate = 20;
    Instant before = Instant.now().minusSeconds(60);
    // business transactions that each save one event of every aggregate
    for (int seq = 0; seq < perAggregate; seq++) {
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        for (int a = 0; a < aggregates; a++) {
          lm.save(
              c,
              event("dep-a" + a + "-" + seq, topic)
                  .aggregateId("acct-" + a)
                  .header("trace-id", "t-" + a + "-" + seq)
                  .header(RelayHeaders.EVENT_ID, "a ticket header must not win")
                  .build());
        }
        c.commit();
      }
    }
    lm.start();
    await().atMost(60, TimeUnit.SECONDS).until(() -> fx.countAll() == 0);

    List<ConsumerRecord<byte[], byte[]>> records =
        Topics.readAll(
            broker.bootstrapServers(), topic, aggregates * perAggregate, TestBroker.CLIENT_WAIT);
    assertThat(records).hasSize(aggregates * perAggregate);
    Instant after = Instant.now().plusSeconds(60);
    for (int a = 0; a < aggregates; a++) {
      String key = "acct-" + a;
      List<ConsumerRecord<byte[], byte[]>> mine =
          records.stream()
              .filter(r -> key.equals(Topics.text(r.key())))
              .sorted((x, y) -> Long.compare(x.offset(), y.offset()))
              .toList();
      assertThat(mine).hasSize(perAggregate);
      assertThat(mine.stream().map(ConsumerRecord::partition).distinct()).hasSize(1);
      for (int seq = 0; seq < perAggregate; seq++) {
        ConsumerRecord<byte[], byte[]> r = mine.get(seq);
        String idem = "dep-a" + a + "-" + seq;
        assertThat(Topics.header(r, RelayHeaders.EVENT_ID)).isEqualTo(idem);
        assertThat(r.headers().headers(RelayHeaders.EVENT_ID)).hasSize(1);
        assertThat(Topics.header(r, RelayHeaders.BIZ_TYPE)).isEqualTo(TYPE);
        assertThat(Long.parseLong(Topics.header(r, RelayHeaders.TICKET_ID))).isPositive();
        Instant created =
            Instant.ofEpochMilli(Long.parseLong(Topics.header(r, RelayHeaders.CREATED_AT)));
        assertThat(created).isBetween(before, after);
        assertThat(Topics.header(r, "trace-id")).isEqualTo("t-" + a + "-" + seq);
        assertThat(Topics.text(r.value())).isEqualTo("{\"key\":\"" + idem + "\"}");
      }
    }
  }

  @Test
  void anOversizedRecordGoesDeadWithTheReasonAndItsNeighboursArriveOnce() throws Exception {
    String topic = Topics.unique("big");
    broker.createTopic(topic, 1);
    LocalMessages lm = engine(10);
    relay.register(lm, TYPE, relayConfig().batchSize(10).build());
    byte[] big = new byte[1536 * 1024];
    Arrays.fill(big, (byte) 'x');
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      lm.save(c, event("small-1", topic).build());
      lm.save(c, event("too-big", topic).payload(big).build());
      lm.save(c, event("small-2", topic).build());
      c.commit();
    }
    assertThat(lm.runOnce()).isEqualTo(3);

    assertThat(fx.countAll()).isEqualTo(1);
    assertThat(fx.count("status = 2 AND idem_key = ?", "too-big")).isEqualTo(1);
    String error =
        Sql.string(ds, "SELECT last_error FROM " + fx.table + " WHERE idem_key = 'too-big'");
    assertThat(error).contains("RecordTooLargeException").contains("too large").contains(topic);
    List<String> ids =
        Topics.readAll(broker.bootstrapServers(), topic, 2, Duration.ofSeconds(10)).stream()
            .map(r -> Topics.header(r, RelayHeaders.EVENT_ID))
            .toList();
    assertThat(ids).containsExactlyInAnyOrder("small-1", "small-2");
  }

  @Test
  void aMissingTopicIsRetriedWithAClearErrorUntilItExists() {
    String topic = Topics.unique("later");
    LocalMessages lm = engine(4);
    relay.register(lm, TYPE, relayConfig().build());
    fx.save(lm, event("e-1", topic).aggregateId("acct-1").build());

    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(fx.count("status = 0 AND attempts = 1")).isEqualTo(1);
    String error = Sql.string(ds, "SELECT last_error FROM " + fx.table);
    assertThat(error).contains("topic '" + topic + "'").contains("auto.create.topics.enable");

    broker.createTopic(topic, 1);
    await()
        .atMost(30, TimeUnit.SECONDS)
        .until(
            () -> {
              lm.runOnce();
              return fx.countAll() == 0;
            });
    List<ConsumerRecord<byte[], byte[]>> records =
        Topics.readAll(broker.bootstrapServers(), topic, 1, Duration.ofSeconds(10));
    assertThat(records).hasSize(1);
    assertThat(Topics.text(records.get(0).key())).isEqualTo("acct-1");
  }

  @Test
  void whatNoRetryCanFixGoesDeadAtOnce() {
    String topic = Topics.unique("fine");
    broker.createTopic(topic, 1);
    LocalMessages lm = engine(10);
    relay.register(lm, TYPE, relayConfig().batchSize(10).build());
    fx.save(lm, event("bad-topic", "no spaces allowed").build());
    fx.save(lm, NewMessage.event(TYPE, "no-topic").payload("x").build());
    fx.save(lm, NewMessage.action(TYPE, "an-action").destination(topic).payload("x").build());
    fx.save(lm, event("good", topic).build());

    assertThat(lm.runOnce()).isEqualTo(4);

    assertThat(fx.count("status = 2")).isEqualTo(3);
    assertThat(lastError("bad-topic")).contains("InvalidTopicException");
    assertThat(lastError("no-topic")).contains("no topic");
    assertThat(lastError("an-action")).contains("EVENT").contains("ACTION");
    assertThat(fx.count("idem_key = 'good'")).isZero();
    assertThat(Topics.readAll(broker.bootstrapServers(), topic, 1, Duration.ofSeconds(10)))
        .extracting(r -> Topics.header(r, RelayHeaders.EVENT_ID))
        .containsExactly("good");
  }

  @Test
  void aTopicResolverChoosesTheTopicAndPublishLatencyIsMeasured() {
    String topic = Topics.unique("resolved");
    broker.createTopic(topic, 1);
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (KafkaRelay resolving =
        KafkaRelay.builder()
            .producerProperties(Map.of("bootstrap.servers", broker.bootstrapServers()))
            .deliveryTimeout(Duration.ofSeconds(3))
            .maxBlock(Duration.ofSeconds(1))
            .topicResolver(m -> topic)
            .meterRegistry(meters)
            .build()) {
      LocalMessages lm = engine(4);
      resolving.register(lm, TYPE, relayConfig().build());
      fx.save(lm, NewMessage.event(TYPE, "r-1").payload("x").build());
      fx.save(lm, NewMessage.event(TYPE, "r-2").payload("x").build());
      assertThat(lm.runOnce()).isEqualTo(2);
      assertThat(fx.countAll()).isZero();
    }
    var published =
        meters
            .find("localmessage.kafka.publish")
            .tag("biz_type", TYPE)
            .tag("result", "acked")
            .timer();
    assertThat(published).isNotNull();
    assertThat(published.count()).isEqualTo(2);
    assertThat(Topics.readAll(broker.bootstrapServers(), topic, 2, Duration.ofSeconds(10)))
        .hasSize(2);
  }

  @Test
  void aProducerTheCallerOwnsIsNotClosedByTheRelay() throws Exception {
    String topic = Topics.unique("owned");
    broker.createTopic(topic, 1);
    Map<String, Object> timeouts =
        Map.of("delivery.timeout.ms", 3000, "max.block.ms", 1000, "request.timeout.ms", 1500);
    try (KafkaProducer<byte[], byte[]> producer =
        Topics.producer(broker.bootstrapServers(), timeouts)) {
      KafkaRelay borrowed =
          KafkaRelay.builder()
              .producer(producer)
              .deliveryTimeout(Duration.ofSeconds(3))
              .maxBlock(Duration.ofSeconds(1))
              .build();
      LocalMessages lm = engine(4);
      borrowed.register(lm, TYPE, relayConfig().build());
      fx.save(lm, event("o-1", topic).build());
      assertThat(lm.runOnce()).isEqualTo(1);
      borrowed.close();
      producer
          .send(new ProducerRecord<>(topic, "still-open".getBytes(StandardCharsets.UTF_8)))
          .get(10, TimeUnit.SECONDS);
    }
    Set<String> values = new HashSet<>();
    Topics.readAll(broker.bootstrapServers(), topic, 2, Duration.ofSeconds(10))
        .forEach(r -> values.add(Topics.text(r.value())));
    assertThat(values).contains("still-open").hasSize(2);
  }

  /**
   * A producer that can no longer send (the client's fatal errors of an idempotent producer; here
   * the relay's first producer answers its sixth send and every later one with an out-of-order
   * sequence, as a producer in that state does) is replaced by a new one: every message arrives,
   * one aggregate's in the order they were saved, and the replacement is counted once. Before,
   * every later send failed for good.
   */
  @Test
  void aProducerThatCanNoLongerSendIsReplacedAndEveryMessageArrivesInAggregateOrder()
      throws Exception {
    String topic = Topics.unique("fatal");
    broker.createTopic(topic, 2);
    java.util.concurrent.atomic.AtomicInteger created =
        new java.util.concurrent.atomic.AtomicInteger();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    KafkaRelay replacing =
        KafkaRelay.builder()
            .producerProperties(Map.of("bootstrap.servers", broker.bootstrapServers()))
            .deliveryTimeout(Duration.ofSeconds(3))
            .maxBlock(Duration.ofSeconds(1))
            .meterRegistry(registry)
            .producerFactory(
                props -> {
                  KafkaProducer<byte[], byte[]> real = new KafkaProducer<>(props);
                  return created.incrementAndGet() == 1 ? failingAfter(real, 5) : real;
                })
            .build();
    int aggregates = 4;
    int perAggregate = 5;
    try {
      LocalMessages lm = engine(8);
      replacing.register(lm, TYPE, relayConfig().ordered(true).batchSize(8).build());
      for (int seq = 0; seq < perAggregate; seq++) {
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          for (int a = 0; a < aggregates; a++) {
            lm.save(c, event("f-a" + a + "-" + seq, topic).aggregateId("acct-" + a).build());
          }
          c.commit();
        }
      }
      lm.start();
      await().atMost(60, TimeUnit.SECONDS).until(() -> fx.countAll() == 0);
    } finally {
      replacing.close();
    }
    List<ConsumerRecord<byte[], byte[]>> records =
        Topics.readAll(
            broker.bootstrapServers(), topic, aggregates * perAggregate, TestBroker.CLIENT_WAIT);
    for (int a = 0; a < aggregates; a++) {
      String key = "acct-" + a;
      List<String> arrived =
          records.stream()
              .filter(r -> key.equals(Topics.text(r.key())))
              .sorted((x, y) -> Long.compare(x.offset(), y.offset()))
              .map(r -> Topics.header(r, RelayHeaders.EVENT_ID))
              .distinct()
              .toList();
      List<String> saved = new ArrayList<>();
      for (int seq = 0; seq < perAggregate; seq++) {
        saved.add("f-a" + a + "-" + seq);
      }
      assertThat(arrived).as("events of " + key + " in arrival order").isEqualTo(saved);
    }
    assertThat(created.get()).as("producers created").isEqualTo(2);
    assertThat(
            registry
                .get("localmessage.kafka.producer.failures")
                .tag("action", "replaced")
                .counter()
                .count())
        .isEqualTo(1.0);
  }

  /**
   * {@code real}, except that its sends after the first {@code good} fail at once with an
   * out-of-order sequence (and are not sent), as the client answers in that fatal state.
   */
  @SuppressWarnings("unchecked")
  private static org.apache.kafka.clients.producer.Producer<byte[], byte[]> failingAfter(
      KafkaProducer<byte[], byte[]> real, int good) {
    java.util.concurrent.atomic.AtomicInteger sends =
        new java.util.concurrent.atomic.AtomicInteger();
    return (org.apache.kafka.clients.producer.Producer<byte[], byte[]>)
        java.lang.reflect.Proxy.newProxyInstance(
            AbstractRelayTest.class.getClassLoader(),
            new Class<?>[] {org.apache.kafka.clients.producer.Producer.class},
            (proxy, method, args) -> {
              if (method.getName().equals("send") && sends.incrementAndGet() > good) {
                RuntimeException fatal =
                    new org.apache.kafka.common.errors.OutOfOrderSequenceException(
                        "test: the broker received an out of order sequence number");
                if (args.length > 1 && args[1] != null) {
                  ((org.apache.kafka.clients.producer.Callback) args[1]).onCompletion(null, fatal);
                }
                java.util.concurrent.CompletableFuture<Object> failed =
                    new java.util.concurrent.CompletableFuture<>();
                failed.completeExceptionally(fatal);
                return failed;
              }
              try {
                return method.invoke(real, args);
              } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private String lastError(String idemKey) {
    return Sql.string(ds, "SELECT last_error FROM " + fx.table + " WHERE idem_key = ?", idemKey);
  }

  static List<String> idemKeys(List<ConsumerRecord<byte[], byte[]>> records) {
    List<String> out = new ArrayList<>();
    records.forEach(r -> out.add(Topics.header(r, RelayHeaders.EVENT_ID)));
    return out;
  }
}
