package io.localmessage.demo;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real single-node KRaft Kafka (one combined broker/controller) in this JVM on 127.0.0.1, from
 * the Kafka Maven artifacts: the demo's zero-setup broker. The only class that touches Kafka's
 * internal test kit.
 */
final class EmbeddedKafka implements AutoCloseable {
  private final KafkaClusterTestKit kit;

  private EmbeddedKafka(KafkaClusterTestKit kit) {
    this.kit = kit;
  }

  static EmbeddedKafka start() {
    KafkaClusterTestKit kit = null;
    try {
      kit =
          new KafkaClusterTestKit.Builder(
                  new TestKitNodes.Builder()
                      .setCombined(true)
                      .setNumBrokerNodes(1)
                      .setNumControllerNodes(1)
                      .build())
              .setConfigProp("group.initial.rebalance.delay.ms", 0)
              .setConfigProp("offsets.topic.replication.factor", (short) 1)
              .setConfigProp("offsets.topic.num.partitions", 1)
              .setConfigProp("transaction.state.log.replication.factor", (short) 1)
              .setConfigProp("transaction.state.log.min.isr", 1)
              .build();
      kit.format();
      kit.startup();
      kit.waitForReadyBrokers();
      return new EmbeddedKafka(kit);
    } catch (Exception e) {
      if (kit != null) {
        try {
          kit.close();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw new IllegalStateException("the embedded Kafka broker did not start: " + e, e);
    }
  }

  String bootstrapServers() {
    return kit.bootstrapServers();
  }

  /** Creates a topic unless it exists (works on any broker, embedded or external). */
  static void createTopic(String bootstrap, String name, int partitions) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(p)) {
      admin
          .createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(Map.of())))
          .all()
          .get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new IllegalStateException("creating topic " + name + " failed: " + e.getCause(), e);
      }
    } catch (Exception e) {
      throw new IllegalStateException("creating topic " + name + " failed: " + e, e);
    }
  }

  @Override
  public void close() {
    try {
      kit.close();
    } catch (Exception e) {
      System.err.println("closing the embedded broker: " + e);
    }
  }
}
