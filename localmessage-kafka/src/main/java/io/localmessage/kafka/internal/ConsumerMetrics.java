package io.localmessage.kafka.internal;

/** What the inbox consumer reports; Micrometer-backed when a registry is given. Not API. */
public interface ConsumerMetrics {
  /** A record was taken from a poll (redeliveries count again). */
  void consumed(String topic);

  /** The record's effect committed; {@code latencyMillis} from lm-created-at, or -1. */
  void applied(String topic, long latencyMillis);

  /** The inbox already held the record's id: handler skipped. */
  void duplicate(String topic);

  /** One handler attempt failed (the record is retried or parked). */
  void failed(String topic);

  /** The record went to the dead table. */
  void parked(String topic);

  ConsumerMetrics NONE =
      new ConsumerMetrics() {
        @Override
        public void consumed(String topic) {}

        @Override
        public void applied(String topic, long latencyMillis) {}

        @Override
        public void duplicate(String topic) {}

        @Override
        public void failed(String topic) {}

        @Override
        public void parked(String topic) {}
      };

  static ConsumerMetrics of(Object registry, String consumer) {
    if (registry == null) {
      return NONE;
    }
    MicrometerSupport.requireMicrometer();
    return MicrometerConsumerMetrics.bind(registry, consumer);
  }
}
