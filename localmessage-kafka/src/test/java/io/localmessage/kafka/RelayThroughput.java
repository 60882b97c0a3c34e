package io.localmessage.kafka;

import static org.awaitility.Awaitility.await;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.kafka.testing.TestBroker;
import io.localmessage.kafka.testing.Topics;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * Measures relay throughput: a backlog of EVENT tickets on PostgreSQL drained by the relay into a
 * local in-JVM broker with {@code acks=all}, once per batch size. Not a test; run it with
 *
 * <pre>
 * ./mvnw -q -pl localmessage-kafka test-compile exec:java -Dexec.skip=false \
 *   -Dexec.classpathScope=test -Dexec.mainClass=io.localmessage.kafka.RelayThroughput \
 *   -Dexec.args="100000 100,500,1000 1000"
 * </pre>
 *
 * Arguments: tickets per run (default 100,000), batch sizes (default 100,500,1000), engine
 * concurrency (default 1000). Prints one line per batch size.
 */
public final class RelayThroughput {
  private RelayThroughput() {}

  public static void main(String[] args) throws Exception {
    int tickets = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    List<Integer> batchSizes = new ArrayList<>();
    for (String s : (args.length > 1 ? args[1] : "100,500,1000").split(",")) {
      batchSizes.add(Integer.parseInt(s.trim()));
    }
    int concurrency = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
    List<String> lines = new ArrayList<>();
    try (TestBroker broker = TestBroker.start(3);
        TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL)) {
      DataSource ds = db.dataSource(16);
      for (int batch : batchSizes) {
        lines.add(run(broker, ds, tickets, batch, concurrency));
        System.out.println(lines.get(lines.size() - 1));
      }
    }
    System.out.println();
    System.out.println(
        "relay throughput, PostgreSQL -> in-JVM broker (1 node, acks=all, 3 partitions)");
    System.out.println(
        String.format(
            Locale.ROOT,
            "%9s %6s %11s %9s %11s %12s",
            "tickets",
            "batch",
            "concurrency",
            "seconds",
            "events/s",
            "saved/s"));
    lines.forEach(System.out::println);
  }

  private static String run(TestBroker broker, DataSource ds, int n, int batch, int concurrency)
      throws Exception {
    String topic = Topics.unique("throughput");
    broker.createTopic(topic, 3);
    try (EngineFixture fx = new EngineFixture(ds);
        KafkaRelay relay =
            KafkaRelay.builder()
                .producerProperties(Map.of("bootstrap.servers", broker.bootstrapServers()))
                .build()) {
      LocalMessages lm =
          fx.build(
              fx.builder()
                  .concurrency(concurrency)
                  .lease(Duration.ofMinutes(1))
                  .writeBackMargin(Duration.ofSeconds(5))
                  .pollInterval(Duration.ofMillis(50)));
      relay.register(
          lm,
          "bench.event",
          HandlerConfig.builder().batchSize(batch).handlerTimeout(Duration.ofSeconds(30)).build());
      long s0 = System.nanoTime();
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        List<NewMessage> chunk = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          chunk.add(
              NewMessage.event("bench.event", "e-" + i)
                  .destination(topic)
                  .aggregateId("acct-" + (i % 1000))
                  .payload("{\"amount\":" + i + ",\"currency\":\"EUR\"}")
                  .build());
          if (chunk.size() == 1000) {
            lm.saveAll(c, chunk);
            c.commit();
            chunk.clear();
          }
        }
        lm.saveAll(c, chunk);
        c.commit();
      }
      double saveSeconds = (System.nanoTime() - s0) / 1e9;
      long t0 = System.nanoTime();
      lm.start();
      await()
          .atMost(Duration.ofMinutes(10))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> fx.countAll() == 0);
      double seconds = (System.nanoTime() - t0) / 1e9;
      lm.close();
      long onTopic = endOffsets(broker, topic);
      if (onTopic < n) {
        throw new IllegalStateException("only " + onTopic + " of " + n + " records on " + topic);
      }
      return String.format(
          Locale.ROOT,
          "%9d %6d %11d %9.2f %11.0f %12.0f",
          n,
          batch,
          concurrency,
          seconds,
          n / seconds,
          n / saveSeconds);
    }
  }

  private static long endOffsets(TestBroker broker, String topic) throws Exception {
    try (Admin admin = broker.admin()) {
      var parts =
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
      Map<TopicPartition, OffsetSpec> spec =
          parts.stream()
              .collect(
                  Collectors.toMap(
                      p -> new TopicPartition(topic, p.partition()), p -> OffsetSpec.latest()));
      return admin.listOffsets(spec).all().get().values().stream().mapToLong(r -> r.offset()).sum();
    }
  }
}
