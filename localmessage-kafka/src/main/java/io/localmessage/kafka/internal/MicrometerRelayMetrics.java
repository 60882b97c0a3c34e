package io.localmessage.kafka.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/** {@code localmessage.kafka.publish}: send to acknowledgement, by biz type and result. */
final class MicrometerRelayMetrics implements RelayMetrics {
  private final MeterRegistry registry;

  private MicrometerRelayMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  static RelayMetrics bind(Object registry) {
    return new MicrometerRelayMetrics(MicrometerSupport.cast(registry));
  }

  @Override
  public void published(String bizType, boolean acked, long nanos) {
    Timer.builder("localmessage.kafka.publish")
        .description("Kafka publish latency: send to broker acknowledgement")
        .tag("biz_type", bizType)
        .tag("result", acked ? "acked" : "failed")
        .register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void producerUnusable(boolean replaced) {
    registry
        .counter(
            "localmessage.kafka.producer.failures", "action", replaced ? "replaced" : "reported")
        .increment();
  }
}
