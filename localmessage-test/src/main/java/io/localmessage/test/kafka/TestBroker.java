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
  private static boolean exitKept;

  /**
   * One broker for every test class of the JVM that does not stop it: topics are not auto-created
   * (tests create theirs, with unique names). Closed when the JVM exits.
   */
  public static synchronized TestBroker shared() {
    if (shared == null) {
      TestBroker b = start(3, Map.of("auto.create.topics.enable", false));
      Runtime.getRuntime().addShutdownHook(new Thread(b::closeAtExit, "test-broker-close"));
      shared = b;
    }
    return shared;
  }

  /**
   * A broker in the test JVM never ends it: Kafka's servers end the process through {@code Exit} on
   * a fatal fault (a stopped or closing broker whose directories are gone, for one), and a non-zero
   * exit status after every test passed fails the build ("Error occurred in starting fork": twice
   * in the Kafka module, both times right after {@code BrokerRestartTest}, the class that stops and
   * restarts its own broker, with all 62 tests green). Reported on standard error instead; set
   * once, before the first broker starts.
   */
  private static synchronized void keepExitStatus() {
    if (exitKept) {
      return;
    }
    exitKept = true;
    org.apache.kafka.common.utils.Exit.Procedure report =
        (status, message) ->
            System.err.println(
                "test broker: exit status " + status + " asked while the JVM exits: " + message);
    org.apache.kafka.common.utils.Exit.setExitProcedure(report);
    org.apache.kafka.common.utils.Exit.setHaltProcedure(report);
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
    keepExitStatus();
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
      awaitWritable(admin, name, partitions);
    } catch (Exception e) {
      throw new IllegalStateException("creating topic " + name + " failed: " + e, e);
    }
  }

  /**
   * Returns once every partition of the new topic has a leader that answers for it. The controller
   * confirms a topic before the broker has its partitions online; an idempotent producer whose
   * first batch of a partition is refused then (UNKNOWN_TOPIC_OR_PARTITION) retries it after its
   * later batches were accepted, and the broker refuses the retry for good
   * (OutOfOrderSequenceException): the records of that batch never reach the topic. Seen under load
   * in the crash test of the inbox consumer (25 of 600 records missing, the producer retrying for
   * its whole delivery timeout).
   */
  private static void awaitWritable(Admin admin, String name, int partitions) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Exception last = null;
    while (System.nanoTime() - deadline < 0) {
      try {
        List<TopicPartitionInfo> infos =
            admin
                .describeTopics(List.of(name))
                .allTopicNames()
                .get(10, TimeUnit.SECONDS)
                .get(name)
                .partitions();
        if (infos.size() == partitions && infos.stream().allMatch(i -> i.leader() != null)) {
          Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
          infos.forEach(
              i -> latest.put(new TopicPartition(name, i.partition()), OffsetSpec.latest()));
          // answered by each partition's leader itself: its log is online
          admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS);
          return;
        }
      } catch (ExecutionException e) {
        last = e; // not online yet: ask again
      }
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
    throw new IllegalStateException(
        "topic " + name + " has no writable leader for every partition after 30 s", last);
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

  /**
   * The shared broker's close when the JVM exits, bounded to 15 s: the test JVM must end soon after
   * its last test (surefire ends a fork that has not exited 30 s after its tests with status 1, and
   * the build then fails with every test green); the process's end stops whatever the close left.
   */
  private void closeAtExit() {
    Thread closing = new Thread(this::close, "test-broker-closing");
    closing.setDaemon(true);
    closing.start();
    try {
      closing.join(15_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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
