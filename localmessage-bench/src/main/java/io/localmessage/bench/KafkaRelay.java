package io.localmessage.bench;

/**
 * Workload 7, the Kafka relay: events per second from a backlog of EVENT tickets to a local broker
 * with {@code acks=all}. A hook only: the Kafka module was written in parallel and is not merged
 * into this branch, so the row prints {@link #NOT_AVAILABLE}.
 *
 * <p>To fill it in once {@code localmessage-kafka} is on the classpath: start a single-node KRaft
 * broker in process ({@code KafkaClusterTestKit}, see ENV.md), seed {@code n} EVENT tickets with
 * {@code destination} = the topic (as {@link Tickets#seedRows} does, with {@code kind = 2}), {@code
 * registerBatch} the relay handler with the engine settings of the drain, time the drain with
 * {@link Drain#awaitEmpty}, return {@code n / seconds}, and make {@link #available()} return true.
 * The table and goal rows are already wired to the key {@code <db>.kafka.relay}.
 */
final class KafkaRelay {
  static final String NOT_AVAILABLE = "n/a (kafka module not merged)";

  private KafkaRelay() {}

  static boolean available() {
    return false;
  }

  static double run(Scope scope, int n, EngineDrain.Settings settings) {
    throw new UnsupportedOperationException(NOT_AVAILABLE);
  }
}
