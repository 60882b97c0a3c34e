package io.localmessage.test.kafka;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real single-node KRaft cluster (one broker, one controller) in this JVM on 127.0.0.1, built on
 * Kafka's own test kit ({@code org.apache.kafka:kafka-test-common-runtime}, which you add to your
 * test dependencies next to this module, in the version of your Kafka clients). It starts in a few
 * seconds on a random port. The broker can be stopped and started again on the same port, the way a
 * broker restart looks to clients. Closed exactly once.
 */
public final class TestBroker implements AutoCloseable {
  private final KafkaClusterTestKit kit;
  private final String bootstrap;
  private boolean closed;

  private TestBroker(KafkaClusterTestKit kit) {
    this.kit = kit;
    this.bootstrap = kit.bootstrapServers();
  }

  private static TestBroker shared;

  /**
   * One broker for every test class of the JVM that does not stop it: topics are not auto-created
   * (tests create theirs, with unique names). Closed when the JVM exits.
   */
  public static synchronized TestBroker shared() {
    if (shared == null) {
      TestBroker b = start(3, Map.of("auto.create.topics.enable", false));
      Runtime.getRuntime().addShutdownHook(new Thread(b::close, "test-broker-close"));
      shared = b;
    }
    return shared;
  }

  /** Starts a cluster whose auto-created topics get {@code partitions} partitions. */
  public static TestBroker start(int partitions) {
    return start(partitions, Map.of());
  }

  /**
   * Starts a cluster whose auto-created topics get {@code partitions} partitions, with extra broker
   * settings.
   */
  public static TestBroker start(int partitions, Map<String, Object> brokerConfig) {
    KafkaClusterTestKit kit = null;
    try {
      KafkaClusterTestKit.Builder b =
          new KafkaClusterTestKit.Builder(
                  new TestKitNodes.Builder()
                      .setCombined(true)
                      .setNumBrokerNodes(1)
                      .setNumControllerNodes(1)
                      .build())
              .setConfigProp("num.partitions", partitions)
              .setConfigProp("group.initial.rebalance.delay.ms", 0)
              .setConfigProp("offsets.topic.replication.factor", (short) 1)
              .setConfigProp("offsets.topic.num.partitions", 1)
              .setConfigProp("transaction.state.log.replication.factor", (short) 1)
              .setConfigProp("transaction.state.log.min.isr", 1);
      brokerConfig.forEach(b::setConfigProp);
      kit = b.build();
      kit.format();
      kit.startup();
      kit.waitForReadyBrokers();
      return new TestBroker(kit);
    } catch (Exception e) {
      if (kit != null) {
        try {
          kit.close();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw new IllegalStateException("the test broker did not start: " + e, e);
    }
  }

  /** The {@code bootstrap.servers} of the broker, on 127.0.0.1. */
  public String bootstrapServers() {
    return bootstrap;
  }

  private BrokerServer broker() {
    return kit.brokers().values().iterator().next();
  }

  /** Stops the broker (the controller keeps running); clients see connection failures. */
  public void stopBroker() {
    broker().shutdown();
    broker().awaitShutdown();
  }

  /** Starts the stopped broker again on the same port and waits until it serves. */
  public void startBroker() {
    broker().startup();
    try {
      kit.waitForReadyBrokers();
    } catch (Exception e) {
      throw new IllegalStateException("the test broker did not come back: " + e, e);
    }
  }

  /** A Kafka admin client on the broker; close it. */
  public Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return Admin.create(p);
  }

  /** Creates a topic with {@code partitions} partitions and waits for it. */
  public void createTopic(String name, int partitions, Map<String, String> config) {
    try (Admin admin = admin()) {
      admin
          .createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(config)))
          .all()
          .get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("creating topic " + name + " failed: " + e, e);
    }
  }

  /** Creates a topic with {@code partitions} partitions and waits for it. */
  public void createTopic(String name, int partitions) {
    createTopic(name, partitions, Map.of());
  }

  /** How many records {@code topic} holds: the sum of its partitions' end offsets. */
  public long recordCount(String topic) {
    try (Admin admin = admin()) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (TopicPartitionInfo p :
          admin
              .describeTopics(List.of(topic))
              .allTopicNames()
              .get(30, TimeUnit.SECONDS)
              .get(topic)
              .partitions()) {
        latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
      }
      return admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values().stream()
          .mapToLong(ListOffsetsResult.ListOffsetsResultInfo::offset)
          .sum();
    } catch (Exception e) {
      throw new IllegalStateException("reading the end offsets of " + topic + " failed: " + e, e);
    }
  }

  /** Creates a topic unless it exists, on any broker (this one or an external one). */
  public static void ensureTopic(String bootstrap, String name, int partitions) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(p)) {
      admin
          .createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new IllegalStateException("creating topic " + name + " failed: " + e.getCause(), e);
      }
    } catch (Exception e) {
      throw new IllegalStateException("creating topic " + name + " failed: " + e, e);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      kit.close();
    } catch (Exception e) {
      throw new IllegalStateException("closing the test broker failed: " + e, e);
    }
  }

  /** A bound for client waits in tests. */
  public static final Duration CLIENT_WAIT = Duration.ofSeconds(30);
}
