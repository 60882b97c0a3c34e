package io.localmessage.kafka.internal;

/** Checks for Micrometer before any class that links against it is loaded. Not API. */
final class MicrometerSupport {
  private MicrometerSupport() {}

  static void requireMicrometer() {
    try {
      Class.forName("io.micrometer.core.instrument.MeterRegistry");
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException(
          "meterRegistry was given but Micrometer (micrometer-core) is not on the classpath", e);
    }
  }

  static io.micrometer.core.instrument.MeterRegistry cast(Object registry) {
    if (!(registry instanceof io.micrometer.core.instrument.MeterRegistry r)) {
      throw new IllegalArgumentException(
          "meterRegistry must be an io.micrometer.core.instrument.MeterRegistry, was "
              + registry.getClass().getName());
    }
    return r;
  }
}
