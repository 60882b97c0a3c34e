package io.localmessage.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.BatchHandler;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.Outcome;
import io.localmessage.test.Crash;
import io.localmessage.test.kafka.Topics;
import io.localmessage.testing.Sql;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * The inbox consumer against a real broker and a real database, one subclass per database: the
 * relay's duplicates, poison records, database failures, rebalances, close, purge, end to end.
 */
public abstract class AbstractInboxConsumerTest extends InboxTestBase {
  // ------------------------------------------------------------------ tests

  /**
   * Consumers of a first deployment starting together each create the inbox and dead tables they
   * find missing: they take turns under the schema lock instead of racing in the catalog (12 at
   * once on one new pair of tables).
   */
  @Test
  void consumersCreatingTheirTablesAtOnceAllStart() throws Exception {
    int consumers = 12;
    String inbox = fx.table + "_cin";
    String dead = fx.table + "_cdead";
    io.localmessage.spi.Dialect dialect;
    try (Connection c = ds.getConnection()) {
      dialect = io.localmessage.spi.Dialects.detect(c);
    }
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(
            consumers, r -> new Thread(r, "test-consumer-start"));
    CountDownLatch go = new CountDownLatch(1);
    List<java.util.concurrent.Future<?>> starts = new java.util.ArrayList<>();
    List<String> failures = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < consumers; i++) {
        starts.add(
            pool.submit(
                () -> {
                  go.await(10, TimeUnit.SECONDS);
                  io.localmessage.kafka.internal.InboxSchema.create(ds, dialect, inbox, dead);
                  return null;
                }));
      }
      go.countDown();
      for (java.util.concurrent.Future<?> f : starts) {
        try {
          f.get(120, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          failures.add(String.valueOf(e.getCause()));
        }
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(failures).isEmpty();
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + inbox)).isZero();
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + dead)).isZero();
  }

  @Test
  void aRelayThatCrashesAfterSendingPublishesTwiceAndTheInboxAppliesOnce() throws Exception {
    String topic = Topics.unique("dup");
    broker.createTopic(topic, 3);
    int n = 100;
    KafkaRelay relay = relay();
    LocalMessages first = fx.build(fx.builder().lease(Duration.ofSeconds(10)).concurrency(n));
    CountDownLatch crashed = new CountDownLatch(1);
    // sends the batch and gets every ack, then dies before a single outcome is written back
    BatchHandler sendThenCrash =
        messages -> {
          List<Outcome> outcomes = relay.handle(messages);
          Crash.halt(first);
          crashed.countDown();
          return outcomes;
        };
    first.registerBatch(TYPE, sendThenCrash, AbstractRelayTest.relayConfig().batchSize(n).build());
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      for (int i = 0; i < n; i++) {
        first.save(
            c,
            NewMessage.event(TYPE, "dep-" + i)
                .destination(topic)
                .aggregateId("acct-" + (i % 7))
                .payload(Integer.toString(i))
                .build());
      }
      c.commit();
    }
    first.start();
    assertThat(crashed.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(fx.count("status = 0")).isEqualTo(n);
    assertThat(Topics.readAll(broker.bootstrapServers(), topic, n, Duration.ofSeconds(20)))
        .hasSize(n);

    // the crashed replica's leases run out; another replica relays everything again
    fx.expireLeases();
    LocalMessages second = fx.build(fx.builder().lease(Duration.ofSeconds(10)).concurrency(n));
    relay.register(second, TYPE, AbstractRelayTest.relayConfig().batchSize(n).build());
    second.start();
    await().atMost(30, TimeUnit.SECONDS).until(() -> fx.countAll() == 0);
    List<ConsumerRecord<byte[], byte[]>> onTopic =
        Topics.readAll(broker.bootstrapServers(), topic, 2 * n, Duration.ofSeconds(20));
    assertThat(onTopic).hasSize(2 * n);
    assertThat(AbstractRelayTest.idemKeys(onTopic).stream().distinct()).hasSize(n);

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    started(consumer("ledger", topic).handler(ledgerWriter()).meterRegistry(meters));
    await()
        .atMost(60, TimeUnit.SECONDS)
        .until(() -> count(meters, "applied") + count(meters, "duplicates") == 2 * n);
    assertThat(ledgerRows()).isEqualTo(n);
    assertThat(ledgerDistinct()).isEqualTo(n);
    assertThat(count(meters, "applied")).isEqualTo(n);
    assertThat(count(meters, "duplicates")).isEqualTo(n);
    assertThat(inboxRows()).isEqualTo(n);
    assertThat(Sql.count(ds, "SELECT SUM(amount) FROM " + ledger))
        .isEqualTo((long) n * (n - 1) / 2);
  }

  @Test
  void aPoisonRecordIsParkedWithItsErrorAndLaterRecordsAreApplied() throws Exception {
    String topic = Topics.unique("poison");
    broker.createTopic(topic, 1);
    Map<String, AtomicInteger> tries = new ConcurrentHashMap<>();
    RecordHandler handler =
        (record, c) -> {
          String id = Topics.header(record, RelayHeaders.EVENT_ID);
          int attempt = tries.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
          // the effect is written first: a failure must roll it back with the inbox row
          insertLedger(c, id, record);
          String value = Topics.text(record.value());
          if (value.equals("poison")) {
            throw new IllegalStateException("cannot apply poison " + id);
          }
          if (value.equals("flaky") && attempt < 3) {
            throw new IllegalStateException("flaky, attempt " + attempt);
          }
        };
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    started(consumer("poisoned", topic).handler(handler).maxAttempts(3).meterRegistry(meters));
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < 10; i++) {
        String value = i == 3 ? "poison" : i == 6 ? "flaky" : Integer.toString(i);
        send(p, topic, "acct-1", "e" + i, value);
      }
    }

    awaitCommitted("poisoned", topic, 10);
    assertThat(ledgerRows()).isEqualTo(9);
    assertThat(ledgerRows("e3")).isZero();
    assertThat(ledgerRows("e6")).isEqualTo(1);
    assertThat(tries.get("e3").get()).isEqualTo(3);
    assertThat(tries.get("e6").get()).isEqualTo(3);
    assertThat(deadRows()).isEqualTo(1);
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT consumer, message_id, topic, kafka_partition, kafka_offset, payload,"
                    + " attempts, last_error, headers FROM "
                    + fx.table
                    + "_dead");
        ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1)).isEqualTo("poisoned");
      assertThat(rs.getString(2)).isEqualTo(TYPE + ":e3");
      assertThat(rs.getString(3)).isEqualTo(topic);
      assertThat(rs.getInt(4)).isZero();
      assertThat(rs.getLong(5)).isEqualTo(3);
      assertThat(new String(rs.getBytes(6), StandardCharsets.UTF_8)).isEqualTo("poison");
      assertThat(rs.getInt(7)).isEqualTo(3);
      assertThat(rs.getString(8))
          .contains("IllegalStateException")
          .contains("cannot apply poison e3");
      assertThat(rs.getString(9)).contains(RelayHeaders.EVENT_ID);
    }
    assertThat(count(meters, "applied")).isEqualTo(9);
    assertThat(count(meters, "parked")).isEqualTo(1);
    assertThat(count(meters, "failures")).isEqualTo(5);
    assertThat(count(meters, "duplicates")).isZero();
    var latency = meters.find("localmessage.inbox.latency").timer();
    assertThat(latency).isNotNull();
    assertThat(latency.count()).isEqualTo(9);
  }

  @Test
  void aPoisonRecordWithBinaryHeadersIsParkedAndThePartitionMovesOn() throws Exception {
    String topic = Topics.unique("binary");
    broker.createTopic(topic, 1);
    // U+0000 and bytes that are not UTF-8, in the event id and in another header
    byte[] eventId = {'e', '1', 0x00, (byte) 0xC3, (byte) 0x28};
    byte[] blob = {0x00, (byte) 0xFF, (byte) 0xFE, 'a'};
    RecordHandler handler =
        (record, c) -> {
          if (Topics.text(record.value()).equals("poison")) {
            // the error quotes the bad bytes, as real handlers' messages do
            throw new IllegalStateException(
                "cannot apply "
                    + Topics.header(record, RelayHeaders.EVENT_ID)
                    + " / "
                    + Topics.header(record, "blob"));
          }
          insertLedger(c, Topics.header(record, RelayHeaders.EVENT_ID), record);
        };
    started(consumer("binary", topic).handler(handler).maxAttempts(2));
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      send(p, topic, "acct-1", "e0", "1");
      ProducerRecord<byte[], byte[]> poison =
          new ProducerRecord<>(topic, null, "poison".getBytes(StandardCharsets.UTF_8));
      poison.headers().add(RelayHeaders.EVENT_ID, eventId);
      poison.headers().add(RelayHeaders.BIZ_TYPE, TYPE.getBytes(StandardCharsets.UTF_8));
      poison.headers().add("blob", blob);
      poison.headers().add("note", "base64:not-really".getBytes(StandardCharsets.UTF_8));
      p.send(poison).get(30, TimeUnit.SECONDS);
      send(p, topic, "acct-1", "e2", "2");
    }

    awaitCommitted("binary", topic, 3);
    assertThat(ledgerRows()).isEqualTo(2);
    assertThat(deadRows()).isEqualTo(1);
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT message_id, headers, last_error, kafka_offset FROM " + fx.table + "_dead");
        ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1)).startsWith("sha256:");
      assertThat(rs.getString(2))
          .contains("\"blob\":\"base64:" + java.util.Base64.getEncoder().encodeToString(blob))
          .contains("\"note\":\"base64:")
          .contains("\"" + RelayHeaders.BIZ_TYPE + "\":\"" + TYPE + "\"");
      assertThat(rs.getString(3)).contains("cannot apply e1").doesNotContain("\u0000");
      assertThat(rs.getLong(4)).isEqualTo(1);
    }
  }

  /**
   * A poison record whose headers are larger than the dead table's headers column can hold
   * (MariaDB's TEXT: 64 KB) is parked all the same: the headers that fit are stored, with a note of
   * what was left out (the whole record stays at its offset in Kafka). Before, the park failed
   * every time and the partition was stuck on the record for good.
   */
  @Test
  void aPoisonRecordWithHeadersLargerThanTheDeadColumnIsParkedAndSaysWhatWasLeftOut()
      throws Exception {
    String topic = Topics.unique("bigheaders");
    broker.createTopic(topic, 1);
    RecordHandler handler =
        (record, c) -> {
          if (Topics.text(record.value()).equals("poison")) {
            throw new IllegalStateException("cannot apply the poison");
          }
          insertLedger(c, Topics.header(record, RelayHeaders.EVENT_ID), record);
        };
    started(consumer("bigheaders", topic).handler(handler).maxAttempts(2));
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      send(p, topic, "acct-1", "e0", "1");
      ProducerRecord<byte[], byte[]> poison =
          new ProducerRecord<>(topic, null, "poison".getBytes(StandardCharsets.UTF_8));
      poison.headers().add(RelayHeaders.EVENT_ID, "e1".getBytes(StandardCharsets.UTF_8));
      for (int i = 0; i < 10; i++) {
        poison.headers().add("big-" + i, "x".repeat(10_000).getBytes(StandardCharsets.UTF_8));
      }
      p.send(poison).get(30, TimeUnit.SECONDS);
      send(p, topic, "acct-1", "e2", "2");
    }

    awaitCommitted("bigheaders", topic, 3);
    assertThat(ledgerRows()).isEqualTo(2);
    assertThat(deadRows()).isEqualTo(1);
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT headers, kafka_offset FROM " + fx.table + "_dead");
        ResultSet rs = ps.executeQuery()) {
      assertThat(rs.next()).isTrue();
      String headers = rs.getString(1);
      assertThat(headers.length()).isLessThanOrEqualTo(16_000);
      assertThat(headers)
          .contains("\"" + RelayHeaders.EVENT_ID + "\":\"e1\"")
          .contains("\"big-0\":\"xxx")
          .contains("localmessage-headers-truncated")
          .contains("of 11 headers");
      assertThat(rs.getLong(2)).isEqualTo(1);
    }
  }

  @Test
  void aDatabaseFailureIsRetriedNotParked() throws Exception {
    String topic = Topics.unique("dbdown");
    broker.createTopic(topic, 1);
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    // one handler failure would park at once: only store failures may wait
    KafkaInboxConsumer.Builder b =
        consumer("dbdown", topic).handler(ledgerWriter()).maxAttempts(1).meterRegistry(meters);
    b.build().close(); // creates the tables
    String inbox = fx.table + "_inbox";
    Sql.update(ds, "ALTER TABLE " + inbox + " RENAME TO " + inbox + "_away");
    started(b.createTables(false));
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < 3; i++) {
        send(p, topic, null, "d" + i, Integer.toString(i));
      }
    }
    // the same record is taken again and again while the inbox cannot be written
    await().atMost(30, TimeUnit.SECONDS).until(() -> count(meters, "consumed") >= 3);
    assertThat(ledgerRows()).isZero();
    Sql.update(ds, "ALTER TABLE " + inbox + "_away RENAME TO " + inbox);

    await().atMost(30, TimeUnit.SECONDS).until(() -> ledgerRows() == 3);
    assertThat(ledgerDistinct()).isEqualTo(3);
    assertThat(deadRows()).isZero();
    assertThat(count(meters, "parked")).isZero();
  }

  @Test
  void aRebalanceNeverSkipsARecordAndNeverAppliesOneTwice() throws Exception {
    String topic = Topics.unique("rebalance");
    broker.createTopic(topic, 3);
    int n = 900;
    RecordHandler handler = ledgerWriter();
    KafkaInboxConsumer a = started(consumer("shared", topic).handler(handler));
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < n; i++) {
        ProducerRecord<byte[], byte[]> r =
            new ProducerRecord<>(
                topic,
                ("k" + (i % 50)).getBytes(StandardCharsets.UTF_8),
                Integer.toString(i).getBytes(StandardCharsets.UTF_8));
        r.headers().add(RelayHeaders.EVENT_ID, ("r" + i).getBytes(StandardCharsets.UTF_8));
        p.send(r);
        if (i == n / 3) {
          p.flush();
          await().atMost(30, TimeUnit.SECONDS).until(() -> ledgerRows() > 0);
          // a second member joins: partitions move while records are being applied
          started(consumer("shared", topic).handler(handler));
        }
        if (i == 2 * n / 3) {
          p.flush();
          a.close();
        }
      }
    }
    await().atMost(90, TimeUnit.SECONDS).until(() -> ledgerRows() >= n);
    assertThat(ledgerRows()).isEqualTo(n);
    assertThat(ledgerDistinct()).isEqualTo(n);
  }

  @Test
  void closeIsBoundedAndARecordInHandIsLeftForTheNextConsumer() throws Exception {
    String topic = Topics.unique("close");
    broker.createTopic(topic, 1);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    KafkaInboxConsumer stuck =
        started(
            consumer("closer", topic)
                .closeTimeout(Duration.ofSeconds(1))
                .handler(
                    (record, c) -> {
                      insertLedger(c, "stuck", record);
                      entered.countDown();
                      never.await(); // until interrupted by close()
                    }));
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      send(p, topic, null, "c0", "7");
    }
    assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
    stuck.close();
    assertThat(stuck.isRunning()).isFalse();
    assertThat(ledgerRows()).isZero();
    assertThat(Topics.committed(broker.bootstrapServers(), "closer", topic)).isEmpty();

    started(consumer("closer", topic).handler(ledgerWriter()));
    await().atMost(30, TimeUnit.SECONDS).until(() -> ledgerRows() == 1);
    assertThat(ledgerRows("c0")).isEqualTo(1);
  }

  @Test
  void inboxRowsArePurgedAfterTheRetention() throws Exception {
    String topic = Topics.unique("purge");
    broker.createTopic(topic, 1);
    KafkaInboxConsumer c =
        started(
            consumer("purger", topic)
                .handler(ledgerWriter())
                .retention(Duration.ofSeconds(1))
                .purgeInterval(Duration.ofSeconds(1)));
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      send(p, topic, null, "p0", "1");
    }
    await().atMost(30, TimeUnit.SECONDS).until(() -> ledgerRows() == 1);
    await().atMost(30, TimeUnit.SECONDS).until(() -> inboxRows() == 0);
    assertThat(c.isRunning()).isTrue();
  }

  @Test
  void endToEndEveryBusinessEventIsAppliedExactlyOnce() throws Exception {
    String topic = Topics.unique("e2e");
    broker.createTopic(topic, 3);
    int n = endToEndCount();
    String deposits = fx.table + "_deposit";
    Sql.update(
        ds, "CREATE TABLE " + deposits + " (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL)");
    LocalMessages lm = fx.build(fx.builder().lease(Duration.ofSeconds(10)).concurrency(500));
    relay().register(lm, TYPE, AbstractRelayTest.relayConfig().batchSize(250).build());
    lm.start();
    started(consumer("e2e", topic).handler(ledgerWriter()));
    int perTx = 50;
    for (int t = 0; t < n / perTx; t++) {
      int base = t * perTx;
      retryingDeadlocks(
          () ->
              lm.inTransaction(
                  c -> {
                    try (PreparedStatement ps =
                        c.prepareStatement(
                            "INSERT INTO " + deposits + " (id, amount) VALUES (?, ?)")) {
                      for (int i = base; i < base + perTx; i++) {
                        ps.setString(1, "dep-" + i);
                        ps.setInt(2, i % 1000);
                        ps.addBatch();
                      }
                      ps.executeBatch();
                    }
                    for (int i = base; i < base + perTx; i++) {
                      lm.save(
                          c,
                          NewMessage.event(TYPE, "dep-" + i)
                              .destination(topic)
                              .aggregateId("acct-" + (i % 100))
                              .payload(Integer.toString(i % 1000))
                              .build());
                    }
                    return null;
                  }));
    }
    await().atMost(150, TimeUnit.SECONDS).until(() -> ledgerRows() >= n && fx.countAll() == 0);
    assertThat(ledgerRows()).isEqualTo(n);
    assertThat(ledgerDistinct()).isEqualTo(n);
    assertThat(Sql.count(ds, "SELECT SUM(amount) FROM " + ledger))
        .isEqualTo(Sql.count(ds, "SELECT SUM(amount) FROM " + deposits));
    assertThat(deadRows()).isZero();
  }

  /** Waits until {@code group} has committed {@code offset} on partition 0 of {@code topic}. */
  private void awaitCommitted(String group, String topic, long offset) {
    await()
        .atMost(60, TimeUnit.SECONDS)
        .until(
            () ->
                Topics.committed(broker.bootstrapServers(), group, topic).getOrDefault(0, 0L)
                    == offset);
  }
}
