package io.localmessage.test.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Reads and writes topics directly, for setting up and checking tests. */
public final class Topics {
  private Topics() {}

  /** A unique topic name for one test. */
  public static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** A byte-array producer with {@code acks=all}; close it. */
  public static KafkaProducer<byte[], byte[]> producer(String bootstrap) {
    return producer(bootstrap, Map.of());
  }

  /**
   * A byte-array producer with {@code acks=all}, one request in flight per connection, and {@code
   * extra} settings; close it. One request in flight: an idempotent producer whose first batch of a
   * partition meets a retriable error re-sends it before any later batch, so the broker never takes
   * a later batch first and then refuses the retry for good (OutOfOrderSequenceException, records
   * lost; seen under load right after a topic was created).
   */
  public static KafkaProducer<byte[], byte[]> producer(String bootstrap, Map<String, ?> extra) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
    p.putAll(extra);
    return new KafkaProducer<>(p);
  }

  /**
   * Every record of {@code topic} from the beginning, reading until at least {@code atLeast}
   * arrived and then until a poll brings nothing more, or until {@code max} passed.
   */
  public static List<ConsumerRecord<byte[], byte[]>> readAll(
      String bootstrap, String topic, int atLeast, Duration max) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      long deadline = System.nanoTime() + max.toNanos();
      List<PartitionInfo> parts = List.of();
      while (parts.isEmpty() && System.nanoTime() - deadline < 0) {
        parts = c.partitionsFor(topic, Duration.ofSeconds(5));
      }
      List<TopicPartition> tps =
          parts.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
      c.assign(tps);
      c.seekToBeginning(tps);
      while (System.nanoTime() - deadline < 0) {
        var batch = c.poll(Duration.ofMillis(300));
        batch.forEach(out::add);
        if (out.size() >= atLeast && batch.isEmpty()) {
          break;
        }
      }
    }
    return out;
  }

  /** The group's committed offsets of {@code topic}, by partition. */
  public static Map<Integer, Long> committed(String bootstrap, String group, String topic) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      var tps =
          c.partitionsFor(topic, Duration.ofSeconds(10)).stream()
              .map(i -> new TopicPartition(topic, i.partition()))
              .collect(Collectors.toSet());
      Map<TopicPartition, OffsetAndMetadata> m = c.committed(tps, Duration.ofSeconds(10));
      return m.entrySet().stream()
          .filter(e -> e.getValue() != null)
          .collect(Collectors.toMap(e -> e.getKey().partition(), e -> e.getValue().offset()));
    }
  }

  /** The last value of header {@code name} as text, or null. */
  public static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    var h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  /** {@code b} as UTF-8 text, or null. */
  public static String text(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }
}
