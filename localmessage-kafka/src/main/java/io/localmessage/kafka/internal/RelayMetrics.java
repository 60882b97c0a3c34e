package io.localmessage.kafka.internal;

/** What the relay reports about its sends; Micrometer-backed when a registry is given. Not API. */
public interface RelayMetrics {
  /** A send completed: acknowledged ({@code acked}) or failed, {@code nanos} after it was sent. */
  void published(String bizType, boolean acked, long nanos);

  /**
   * The relay's producer could no longer send: replaced by a new one ({@code replaced}), or, a
   * producer the caller owns, only reported.
   */
  default void producerUnusable(boolean replaced) {}

  RelayMetrics NONE = (bizType, acked, nanos) -> {};

  /** Binds to a Micrometer {@code MeterRegistry}; fails clearly when Micrometer is missing. */
  static RelayMetrics of(Object registry) {
    if (registry == null) {
      return NONE;
    }
    MicrometerSupport.requireMicrometer();
    return MicrometerRelayMetrics.bind(registry);
  }
}
