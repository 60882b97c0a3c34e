package io.localmessage.faults;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;

/**
 * A single-node KRaft Kafka broker as a separate process on 127.0.0.1 (from the Kafka jars on the
 * test class path), so the suite can SIGKILL it and start it again on the same port and log dir.
 */
final class BrokerProcess implements AutoCloseable {
  /** Bounded: a JVM start on a machine busy with the rest of the suite can take a minute. */
  private static final long START_TIMEOUT_SECONDS = 150;

  private final Path dir;
  private final int port;
  private final File properties;
  private final File log;
  private Process process;

  BrokerProcess(Path dir) throws IOException {
    this.dir = dir;
    this.port = freePort();
    int controllerPort = freePort();
    this.properties = dir.resolve("server.properties").toFile();
    this.log = dir.resolve("broker.log").toFile();
    Files.writeString(
        properties.toPath(),
        String.join(
            "\n",
            "process.roles=broker,controller",
            "node.id=1",
            "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
            "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
            "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs=" + dir.resolve("data"),
            "num.partitions=3",
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=3",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=true",
            ""));
    run(
        List.of(
            "kafka.tools.StorageTool",
            "format",
            "-t",
            Uuid.randomUuid().toString(),
            "-c",
            properties.getPath()));
  }

  String bootstrap() {
    return "127.0.0.1:" + port;
  }

  /** Starts the broker and waits until it answers a metadata request. */
  void start() throws Exception {
    process =
        java(List.of(
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "kafka.Kafka",
                properties.getPath()))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log))
            .start();
    java.util.Properties p = new java.util.Properties();
    p.put("bootstrap.servers", bootstrap());
    p.put("request.timeout.ms", 2000);
    p.put("default.api.timeout.ms", 2000);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
    try (org.apache.kafka.clients.admin.Admin admin =
        org.apache.kafka.clients.admin.Admin.create(p)) {
      while (System.nanoTime() < deadline) {
        if (!process.isAlive()) {
          throw new IllegalStateException("the broker exited: see " + log);
        }
        try {
          if (!admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).isEmpty()) {
            return;
          }
        } catch (Exception notYet) {
          FaultRun.waitQuietly(java.time.Duration.ofMillis(200));
        }
      }
    }
    throw new IllegalStateException(
        "the broker did not start in " + START_TIMEOUT_SECONDS + " s: see " + log);
  }

  /** SIGKILL, as a crashed broker. */
  void kill() throws InterruptedException {
    if (process != null) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Override
  public void close() throws InterruptedException {
    kill();
  }

  private void run(List<String> args) throws IOException {
    try {
      Process p =
          java(args)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("format.log").toFile()))
              .start();
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(
            "formatting the broker storage failed: see " + dir.resolve("format.log"));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  static ProcessBuilder java(List<String> mainAndArgs) {
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> cmd =
        new java.util.ArrayList<>(
            List.of(
                new File(System.getProperty("java.home"), "bin/java").getPath(),
                "-Xmx512m",
                "-cp",
                cp));
    cmd.addAll(mainAndArgs);
    return new ProcessBuilder(cmd);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
