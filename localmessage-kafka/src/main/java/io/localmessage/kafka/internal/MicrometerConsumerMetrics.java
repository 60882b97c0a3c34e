package io.localmessage.kafka.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * {@code localmessage.inbox.consumed|applied|duplicates|failures|parked} counters and the {@code
 * localmessage.inbox.latency} timer (lm-created-at to applied), tagged {@code consumer} and {@code
 * topic}.
 */
final class MicrometerConsumerMetrics implements ConsumerMetrics {
  private static final String P = "localmessage.inbox.";

  private final MeterRegistry registry;
  private final String consumer;

  private MicrometerConsumerMetrics(MeterRegistry registry, String consumer) {
    this.registry = registry;
    this.consumer = consumer;
  }

  static ConsumerMetrics bind(Object registry, String consumer) {
    return new MicrometerConsumerMetrics(MicrometerSupport.cast(registry), consumer);
  }

  private Counter counter(String name, String topic) {
    return Counter.builder(P + name)
        .tag("consumer", consumer)
        .tag("topic", topic)
        .register(registry);
  }

  @Override
  public void consumed(String topic) {
    counter("consumed", topic).increment();
  }

  @Override
  public void applied(String topic, long latencyMillis) {
    counter("applied", topic).increment();
    if (latencyMillis >= 0) {
      Timer.builder(P + "latency")
          .description("end to end: ticket created_at (producer's DB clock) to effect committed")
          .tag("consumer", consumer)
          .tag("topic", topic)
          .register(registry)
          .record(Duration.ofMillis(latencyMillis));
    }
  }

  @Override
  public void duplicate(String topic) {
    counter("duplicates", topic).increment();
  }

  @Override
  public void failed(String topic) {
    counter("failures", topic).increment();
  }

  @Override
  public void parked(String topic) {
    counter("parked", topic).increment();
  }
}
