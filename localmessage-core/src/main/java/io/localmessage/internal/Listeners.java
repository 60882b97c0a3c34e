package io.localmessage.internal;

import io.localmessage.spi.EngineListener;
import java.util.ArrayList;
import java.util.List;

/** Fans engine events out to the user's listener and the optional Micrometer binding. */
final class Listeners {
  private Listeners() {}

  static EngineListener combine(EngineListener user, Object meterRegistry, Engine engine) {
    List<EngineListener> all = new ArrayList<>();
    all.add(user);
    if (meterRegistry != null) {
      all.add(MetricsBridge.bind(meterRegistry, engine));
    }
    return EngineListener.composite(all);
  }
}
