package io.localmessage.internal.engine;

import io.localmessage.admin.Admin;
import io.localmessage.spi.EngineListener;

/**
 * Loads the Micrometer binding only when a registry was given, so the core runs without Micrometer
 * on the classpath.
 */
final class MetricsBridge {
  private MetricsBridge() {}

  static EngineListener bind(Object registry, Admin admin) {
    try {
      Class.forName("io.micrometer.core.instrument.MeterRegistry");
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException(
          "meterRegistry was given but Micrometer (micrometer-core) is not on the classpath", e);
    }
    return io.localmessage.internal.metrics.MicrometerMetrics.bind(registry, admin);
  }
}
