package io.localmessage.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.test.kafka.TestBroker;
import io.localmessage.test.kafka.Topics;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;

/**
 * The test kit's promise to every broker test: a topic it created takes a burst of records sent at
 * once, to every partition, and holds each exactly once. A crash test once waited 90 s for a
 * consumer to reach records that never reached the topic: the producer's first batch of a
 * partition, refused while the new partition was not online yet, was retried after later batches
 * and refused for good (OutOfOrderSequenceException).
 */
class TestKitTopicsTest {

  @Test
  void aBurstSentRightAfterCreationLandsWholeOnEveryPartition() throws Exception {
    TestBroker broker = TestBroker.shared();
    for (int round = 0; round < 5; round++) {
      String topic = Topics.unique("burst");
      broker.createTopic(topic, 3);
      List<Future<RecordMetadata>> sends = new ArrayList<>();
      try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
        for (int i = 0; i < 600; i++) {
          sends.add(
              p.send(
                  new ProducerRecord<>(
                      topic, i % 3, null, ("r" + i).getBytes(StandardCharsets.UTF_8))));
        }
        p.flush();
      }
      for (Future<RecordMetadata> s : sends) {
        assertThat(s.get(30, TimeUnit.SECONDS).hasOffset()).isTrue();
      }
      assertThat(broker.recordCount(topic)).as(topic).isEqualTo(600);
    }
  }
}
