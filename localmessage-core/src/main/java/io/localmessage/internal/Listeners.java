package io.localmessage.internal;

import io.localmessage.spi.EngineListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Fans engine events out to the user's listener and the optional Micrometer binding. */
final class Listeners {
  private Listeners() {}

  static EngineListener combine(EngineListener user, Object meterRegistry, Engine engine) {
    List<EngineListener> all = new ArrayList<>();
    if (user != null && user != EngineListener.NONE) {
      all.add(user);
    }
    if (meterRegistry != null) {
      all.add(MetricsBridge.bind(meterRegistry, engine));
    }
    if (all.isEmpty()) {
      return EngineListener.NONE;
    }
    return all.size() == 1 ? all.get(0) : new Fanout(List.copyOf(all));
  }

  private record Fanout(List<EngineListener> targets) implements EngineListener {
    @Override
    public void saved(String bizType, boolean duplicate) {
      targets.forEach(t -> t.saved(bizType, duplicate));
    }

    @Override
    public void saveFailed(String bizType, Throwable error) {
      targets.forEach(t -> t.saveFailed(bizType, error));
    }

    @Override
    public void claimed(String bizType, int claimed, int leaseReclaims, Duration queryTime) {
      targets.forEach(t -> t.claimed(bizType, claimed, leaseReclaims, queryTime));
    }

    @Override
    public void delivered(
        String bizType, Result result, int attempt, Duration handlerTime, Duration sinceCreated) {
      targets.forEach(t -> t.delivered(bizType, result, attempt, handlerTime, sinceCreated));
    }

    @Override
    public void casConflicts(String bizType, int count) {
      targets.forEach(t -> t.casConflicts(bizType, count));
    }

    @Override
    public void expiredLastAttempt(int count) {
      targets.forEach(t -> t.expiredLastAttempt(count));
    }
  }
}
