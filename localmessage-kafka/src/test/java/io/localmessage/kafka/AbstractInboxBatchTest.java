package io.localmessage.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.kafka.testing.CommitFaults;
import io.localmessage.test.kafka.Topics;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Batches: one transaction for many records, and what must still hold record by record: a failing
 * record takes nobody with it, duplicates inside a batch, commits whose result is unknown, a crash
 * between the database commit and the offset commit, a rebalance while a batch runs, a poison
 * record that holds only its partition. Real broker, real database, one subclass per database.
 */
public abstract class AbstractInboxBatchTest extends InboxTestBase {

  /** On PostgreSQL {@code now()} is the transaction's start: inbox rows tell their transaction. */
  private long inboxTransactions() {
    return Sql.count(ds, "SELECT COUNT(DISTINCT received_at) FROM " + fx.table + "_inbox");
  }

  private boolean postgres() {
    return db.kind() == TestDatabase.Kind.POSTGRESQL;
  }

  @Test
  void aFailingRecordRollsBackAloneItsNeighboursApplyOnceAndItIsParked() throws Exception {
    String topic = Topics.unique("batchfail");
    broker.createTopic(topic, 1);
    int n = 200;
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < n; i++) {
        sendAsync(p, topic, 0, "acct-1", "b" + i, i == 120 ? "poison" : Integer.toString(i));
      }
      p.flush();
    }
    Map<String, Integer> calls = new ConcurrentHashMap<>();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    // the whole backlog is there before the consumer starts: the first batch holds the poison
    started(
        consumer("batchfail", topic)
            .batchSize(500)
            .maxAttempts(3)
            .meterRegistry(meters)
            .handler(
                (record, c) -> {
                  String id = Topics.header(record, RelayHeaders.EVENT_ID);
                  calls.merge(id, 1, Integer::sum);
                  insertLedger(c, id, record); // written first: the failure must undo it
                  if (Topics.text(record.value()).equals("poison")) {
                    throw new IllegalStateException("cannot apply " + id);
                  }
                }));

    await()
        .atMost(60, TimeUnit.SECONDS)
        .until(() -> committedSum("batchfail", topic) == n && deadRows() == 1);
    assertThat(ledgerRows()).isEqualTo(n - 1);
    assertThat(ledgerDistinct()).isEqualTo(n - 1);
    assertThat(ledgerRows("b120")).isZero();
    assertThat(calls.get("b120")).as("tried in the batch, then twice alone").isEqualTo(3);
    assertThat(calls.values())
        .as("the records before it were rolled back with it and applied again")
        .contains(2);
    assertThat(count(meters, "applied")).isEqualTo(n - 1);
    assertThat(count(meters, "parked")).isEqualTo(1);
    assertThat(count(meters, "failures")).isEqualTo(3);
    assertThat(count(meters, "duplicates")).isZero();
    assertThat(Sql.count(ds, "SELECT attempts FROM " + fx.table + "_dead")).isEqualTo(3);
    if (postgres()) {
      assertThat(inboxTransactions()).as("199 inbox rows in a few transactions").isLessThan(10);
    }
  }

  /** A new one-partition topic holding events {@code prefix + i}, amount {@code i}, i below n. */
  private String backlog(String name, String prefix, int n) throws Exception {
    String topic = Topics.unique(name);
    broker.createTopic(topic, 1);
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < n; i++) {
        sendAsync(p, topic, 0, "acct-1", prefix + i, Integer.toString(i));
      }
      p.flush();
    }
    return topic;
  }

  @Test
  void aHandlerThatSwallowsAnSqlErrorNeverCommitsOffsetsForEffectsThatDidNotCommit()
      throws Exception {
    int n = 50;
    String topic = backlog("swallow", "s", n);
    Map<String, Integer> calls = new ConcurrentHashMap<>();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    started(
        consumer("swallow", topic)
            .batchSize(500)
            .maxAttempts(3)
            .meterRegistry(meters)
            .handler(
                (record, c) -> {
                  String id = Topics.header(record, RelayHeaders.EVENT_ID);
                  insertLedger(c, id, record);
                  // the last record: no later statement of the batch tells the handler
                  if (id.equals("s" + (n - 1)) && calls.merge(id, 1, Integer::sum) == 1) {
                    // "a duplicate means already booked", without a savepoint
                    try (var ps = c.prepareStatement("INSERT INTO no_such_table VALUES (1)")) {
                      ps.executeUpdate();
                    } catch (java.sql.SQLException alreadyBooked) {
                      // swallowed: PostgreSQL now rolls the whole transaction back at commit
                    }
                  }
                }));

    await().atMost(60, TimeUnit.SECONDS).until(() -> committedSum("swallow", topic) == n);
    assertThat(ledgerRows()).as("every effect committed before its offset").isEqualTo(n);
    assertThat(ledgerDistinct()).isEqualTo(n);
    assertThat(inboxRows()).isEqualTo(n);
    assertThat(deadRows()).isZero();
    assertThat(count(meters, "failures"))
        .as("the swallowed error fails its record once on PostgreSQL only")
        .isEqualTo(postgres() ? 1 : 0);
  }

  @Test
  void anErrorInAHandlerRollsTheBatchBackAndEveryRecordAppliesOnce() throws Exception {
    int n = 5;
    String topic = backlog("oom", "e", n);
    Map<String, Integer> calls = new ConcurrentHashMap<>();
    started(
        consumer("oom", topic)
            .batchSize(500)
            .maxAttempts(3)
            .handler(
                (record, c) -> {
                  String id = Topics.header(record, RelayHeaders.EVENT_ID);
                  insertLedger(c, id, record); // the debit, written before the decoder fails
                  if (id.equals("e2") && calls.merge(id, 1, Integer::sum) == 1) {
                    throw new OutOfMemoryError("test: a decoder trusted a corrupt length");
                  }
                }));

    await().atMost(60, TimeUnit.SECONDS).until(() -> committedSum("oom", topic) == n);
    assertThat(ledgerRows()).isEqualTo(n);
    assertThat(ledgerDistinct()).isEqualTo(n);
    assertThat(inboxRows()).isEqualTo(n);
    assertThat(deadRows()).isZero();
  }

  @Test
  void theSameEventTwiceInOneBatchIsAppliedOnce() throws Exception {
    String topic = Topics.unique("batchdup");
    broker.createTopic(topic, 1);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      ids.add("d" + i / 3); // every id three times in a row
    }
    ids.add("d0"); // and once more later in the same batch
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (String id : ids) {
        sendAsync(p, topic, 0, "acct-1", id, "1");
      }
      p.flush();
    }
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    started(consumer("batchdup", topic).handler(ledgerWriter()).meterRegistry(meters));

    await().atMost(60, TimeUnit.SECONDS).until(() -> committedSum("batchdup", topic) == 61);
    assertThat(ledgerRows()).isEqualTo(20);
    assertThat(ledgerDistinct()).isEqualTo(20);
    assertThat(inboxRows()).isEqualTo(20);
    assertThat(count(meters, "applied")).isEqualTo(20);
    assertThat(count(meters, "duplicates")).isEqualTo(41);
  }

  @Test
  void aCommitWhoseResultIsUnknownIsResolvedByTheInboxOnReplay() throws Exception {
    String topic = Topics.unique("unknown");
    broker.createTopic(topic, 3);
    int n = 300;
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < n; i++) {
        sendAsync(p, topic, i % 3, "k" + i, "u" + i, "1");
      }
      p.flush();
    }
    // the 2nd commit reaches the database and its answer is lost; the 4th never commits
    CommitFaults faults =
        new CommitFaults(ds)
            .on(2, CommitFaults.Fault.COMMIT_THEN_THROW)
            .on(4, CommitFaults.Fault.ROLLBACK_THEN_THROW);
    consumer("unknown", topic).handler(ledgerWriter()).build().close(); // creates the tables
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    started(
        KafkaInboxConsumer.builder(faults.dataSource(), "unknown")
            .consumerProperties(Map.of("bootstrap.servers", broker.bootstrapServers()))
            .topics(topic)
            .inboxTable(fx.table + "_inbox")
            .deadTable(fx.table + "_dead")
            .purgeInterval(Duration.ZERO)
            .pollTimeout(Duration.ofMillis(100))
            .backoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .batchSize(20)
            .maxAttempts(1) // a commit failure is not the records' fault: nothing may be parked
            .handler(ledgerWriter())
            .meterRegistry(meters));

    await()
        .atMost(60, TimeUnit.SECONDS)
        .until(() -> committedSum("unknown", topic) == n && faults.fired() == 2);
    assertThat(ledgerRows()).isEqualTo(n);
    assertThat(ledgerDistinct()).isEqualTo(n);
    assertThat(deadRows()).isZero();
    // the batch whose commit went through unseen came back and was skipped as duplicates
    assertThat(count(meters, "duplicates")).isPositive();
    assertThat(count(meters, "applied") + count(meters, "duplicates")).isEqualTo(n);
  }

  @Test
  void aConsumerKilledBetweenTheDatabaseCommitAndTheOffsetCommitAppliesNothingTwice()
      throws Exception {
    String topic = Topics.unique("crash");
    broker.createTopic(topic, 3);
    int n = 600;
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < n; i++) {
        sendAsync(p, topic, i % 3, "c" + i, "c" + i, "1");
      }
      p.flush();
    }
    consumer("crash", topic).handler(ledgerWriter()).build().close(); // creates the tables
    Process child =
        javaProcess(
                CrashingConsumer.class.getName(),
                "--url=" + db.jdbcUrl(),
                "--user=" + db.user(),
                "--password=" + db.password(),
                "--bootstrap=" + broker.bootstrapServers(),
                "--topic=" + topic,
                "--name=crash",
                "--table=" + fx.table,
                "--batch-size=50",
                "--halt-after=4")
            .redirectErrorStream(true)
            .redirectOutput(new File("target", "crashing-consumer-" + db.kind() + ".log"))
            .start();
    try {
      assertThat(child.waitFor(90, TimeUnit.SECONDS)).as("the consumer halted").isTrue();
    } finally {
      child.destroyForcibly();
    }
    assertThat(child.exitValue()).isEqualTo(CommitFaults.HALT_EXIT_CODE);
    long applied = ledgerRows();
    long committed = committedSum("crash", topic);
    assertThat(applied).as("four batches committed in the database").isBetween(4L, 200L);
    assertThat(committed).as("the last batch's offsets never reached Kafka").isLessThan(applied);

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    started(consumer("crash", topic).handler(ledgerWriter()).meterRegistry(meters));
    long takeOverStart = System.nanoTime();
    try {
      // the dead member's 6 s session, then 450 records: about 7 s here; the deadline only stops
      // a hung take-over, and a miss says where it stood
      await().atMost(90, TimeUnit.SECONDS).until(() -> committedSum("crash", topic) == n);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          "no take-over within 90 s of the halt: "
              + groupState("crash", topic)
              + "; the halted consumer's log: target/crashing-consumer-"
              + db.kind()
              + ".log",
          e);
    }
    System.out.printf(
        "take-over after the halt: %d ms (%s)%n",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - takeOverStart), db.kind());
    assertThat(ledgerRows()).isEqualTo(n);
    assertThat(ledgerDistinct()).isEqualTo(n);
    assertThat(count(meters, "duplicates")).isGreaterThanOrEqualTo(applied - committed);
    assertThat(count(meters, "applied")).isEqualTo(n - applied);
  }

  @Test
  void aRebalanceWhileABatchRunsCommitsOnlyWhatIsDoneAndAppliesNothingTwice() throws Exception {
    String topic = Topics.unique("midbatch");
    broker.createTopic(topic, 3);
    int n = 300;
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < n; i++) {
        sendAsync(p, topic, i % 3, "m" + i, "m" + i, "1");
      }
      p.flush();
    }
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicReference<ConsumerRecord<byte[], byte[]>> held = new AtomicReference<>();
    RecordHandler ledgerWriter = ledgerWriter();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    KafkaInboxConsumer a =
        started(
            consumer("midbatch", topic)
                .batchSize(50)
                .closeTimeout(Duration.ofSeconds(2)) // a rebalance waits 1 s for a batch
                .meterRegistry(meters)
                .handler(
                    (record, c) -> {
                      ledgerWriter.handle(record, c);
                      // the first batch of one partition stops inside, its inbox rows written
                      if (held.compareAndSet(null, record)) {
                        inside.countDown();
                        assertThat(release.await(60, TimeUnit.SECONDS)).isTrue();
                      }
                    }));
    assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
    TopicPartition tp = new TopicPartition(topic, held.get().partition());

    // a second member joins: the partitions move while the batch is inside
    // (the tables exist: their DDL would wait for the open transaction's locks)
    KafkaInboxConsumer b =
        started(
            consumer("midbatch", topic)
                .createTables(false)
                .handler(ledgerWriter)
                .meterRegistry(meters));
    await().atMost(60, TimeUnit.SECONDS).until(() -> !b.assignment().isEmpty());
    long before =
        Topics.committed(broker.bootstrapServers(), "midbatch", topic)
            .getOrDefault(tp.partition(), 0L);
    assertThat(before)
        .as("nothing of the batch in flight was committed to Kafka")
        .isLessThanOrEqualTo(held.get().offset());
    release.countDown();

    await().atMost(90, TimeUnit.SECONDS).until(() -> committedSum("midbatch", topic) == n);
    assertThat(ledgerRows()).isEqualTo(n);
    assertThat(ledgerDistinct()).isEqualTo(n);
    assertThat(a.assignment()).doesNotContainAnyElementsOf(b.assignment());
    assertThat(count(meters, "applied")).isEqualTo(n);
    assertThat(count(meters, "duplicates"))
        .as("the batch that committed after its partition moved was skipped by the next owner")
        .isPositive();
  }

  @Test
  void aPoisonRecordHoldsOnlyItsOwnPartition() throws Exception {
    String topic = Topics.unique("holds");
    broker.createTopic(topic, 2);
    try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
      for (int i = 0; i < 100; i++) {
        sendAsync(p, topic, 0, "a", "p0-" + i, i == 10 ? "poison" : "1");
        sendAsync(p, topic, 1, "b", "p1-" + i, "1");
      }
      p.flush();
    }
    started(
        consumer("holds", topic)
            .maxAttempts(100)
            .backoff(Duration.ofMillis(500), Duration.ofMillis(500)) // retried for ~50 s
            .handler(
                (record, c) -> {
                  if (Topics.text(record.value()).equals("poison")) {
                    throw new IllegalStateException("poison");
                  }
                  insertLedger(c, Topics.header(record, RelayHeaders.EVENT_ID), record);
                }));

    String p0 = "SELECT COUNT(*) FROM " + ledger + " WHERE event_id LIKE 'p0-%'";
    String p1 = "SELECT COUNT(*) FROM " + ledger + " WHERE event_id LIKE 'p1-%'";
    // the partitions are applied side by side: partition 1 finishing says nothing about how far
    // partition 0 got, so wait for both
    await()
        .atMost(30, TimeUnit.SECONDS)
        .until(() -> Sql.count(ds, p1) == 100 && Sql.count(ds, p0) >= 10);
    // partition 0 stops at its poison record, in order: nothing after it is applied
    assertThat(Sql.count(ds, p0)).isEqualTo(10);
    assertThat(deadRows()).isZero();
    await()
        .atMost(30, TimeUnit.SECONDS)
        .until(
            () ->
                Topics.committed(broker.bootstrapServers(), "holds", topic).getOrDefault(1, 0L)
                    == 100L);
    assertThat(Topics.committed(broker.bootstrapServers(), "holds", topic).getOrDefault(0, 0L))
        .isLessThanOrEqualTo(10L);
  }

  private static ProcessBuilder javaProcess(String... mainAndArgs) {
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> cmd =
        new ArrayList<>(
            List.of(
                new File(System.getProperty("java.home"), "bin/java").getPath(),
                "-Xmx256m",
                "-cp",
                cp));
    cmd.addAll(List.of(mainAndArgs));
    return new ProcessBuilder(cmd);
  }
}
