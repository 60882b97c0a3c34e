package io.localmessage.internal.engine;

import io.localmessage.admin.Admin;
import io.localmessage.spi.EngineListener;
import java.util.ArrayList;
import java.util.List;

/** Fans engine events out to the user's listener and the optional Micrometer binding. */
final class Listeners {
  private Listeners() {}

  static EngineListener combine(EngineListener user, Object meterRegistry, Admin admin) {
    List<EngineListener> all = new ArrayList<>();
    all.add(user);
    if (meterRegistry != null) {
      all.add(MetricsBridge.bind(meterRegistry, admin));
    }
    return EngineListener.composite(all);
  }
}
