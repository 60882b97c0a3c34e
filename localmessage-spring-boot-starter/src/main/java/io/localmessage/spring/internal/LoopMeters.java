package io.localmessage.spring.internal;

import io.localmessage.EngineHealth;
import io.localmessage.LocalMessages;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Gauges of the engine's loops, read from {@link LocalMessages#health()} (memory, no query): {@code
 * localmessage.loop.stuck{loop}} is 1 while the running engine's loop is stuck (no successful
 * iteration for longer than its threshold, or its thread died), else 0; {@code
 * localmessage.loop.last.success.age.seconds{loop}} is the time since its last successful iteration
 * (NaN before the first). Not API.
 */
public final class LoopMeters implements MeterBinder {
  /** The engine's loops, as {@link EngineHealth.Loop#name()} names them. */
  public static final List<String> LOOPS =
      List.of("poller", "writer", "watchdog", "renewer", "maintenance");

  private final LocalMessages engine;

  public LoopMeters(LocalMessages engine) {
    this.engine = engine;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (String loop : LOOPS) {
      Gauge.builder("localmessage.loop.stuck", this, m -> m.stuck(loop))
          .description("1 while this engine loop is stuck, else 0")
          .tag("loop", loop)
          .strongReference(true) // whoever bound it need not keep it, or the gauge reads NaN
          .register(registry);
      Gauge.builder("localmessage.loop.last.success.age.seconds", this, m -> m.age(loop))
          .description("seconds since this engine loop last completed an iteration")
          .tag("loop", loop)
          .strongReference(true) // whoever bound it need not keep it, or the gauge reads NaN
          .register(registry);
    }
  }

  private double stuck(String name) {
    EngineHealth h = engine.health();
    if (!h.running()) {
      return 0; // loops of an engine that was not started do not run on their own
    }
    return h.loops().stream().anyMatch(l -> l.name().equals(name) && l.stuck()) ? 1 : 0;
  }

  private double age(String name) {
    for (EngineHealth.Loop l : engine.health().loops()) {
      if (l.name().equals(name)) {
        Instant last = l.lastSuccess();
        return last == null
            ? Double.NaN
            : Duration.between(last, Instant.now()).toMillis() / 1000.0;
      }
    }
    return Double.NaN;
  }
}
