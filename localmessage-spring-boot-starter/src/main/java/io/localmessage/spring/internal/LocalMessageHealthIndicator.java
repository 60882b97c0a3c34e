package io.localmessage.spring.internal;

import io.localmessage.EngineHealth;
import io.localmessage.LocalMessages;
import io.localmessage.admin.TypeStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * UP with the backlog per biz type and the state of each engine loop; DOWN when a loop of the
 * running engine is stuck (no successful iteration for longer than its threshold, or its thread
 * died) or the message table cannot be read; the configured threshold status (OUT_OF_SERVICE by
 * default) when the oldest PENDING message is older than {@code maxOldestPendingAge} or more than
 * {@code maxDead} messages are DEAD. Not API.
 */
public final class LocalMessageHealthIndicator extends AbstractHealthIndicator {
  private static final Logger log = LoggerFactory.getLogger(LocalMessageHealthIndicator.class);

  private final LocalMessages engine;
  private final Duration maxOldestPendingAge;
  private final Long maxDead;
  private final Status thresholdStatus;

  public LocalMessageHealthIndicator(
      LocalMessages engine, Duration maxOldestPendingAge, Long maxDead, String thresholdStatus) {
    super("localmessage health check failed");
    this.engine = engine;
    this.maxOldestPendingAge = maxOldestPendingAge;
    this.maxDead = maxDead;
    this.thresholdStatus = new Status(thresholdStatus.strip().toUpperCase(java.util.Locale.ROOT));
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    // read from memory first: a stuck loop is reported even when the table cannot be read
    EngineHealth engineHealth = engine.health();
    builder.withDetail("running", engineHealth.running()).withDetail("loops", loops(engineHealth));
    // loops of an engine that is not running (auto-startup off, driven by runOnce) do not run on
    // their own: their age is no sign of being stuck
    boolean engineDown = engineHealth.running() && !engineHealth.healthy();
    List<String> stuck = engineHealth.running() ? stuckLoops(engineHealth) : List.of();
    if (!stuck.isEmpty()) {
      builder.withDetail("stuck", stuck);
    }
    List<TypeStats> stats;
    try {
      stats = engine.admin().stats();
    } catch (RuntimeException e) {
      // the store's own message ("reading ... failed") hides why: add the root cause
      Throwable root = e;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      log.warn("event=health_check_failed error={} cause={}", e, root.toString());
      builder.down(e).withDetail("cause", root.toString());
      return;
    }
    long pending = 0;
    long dead = 0;
    Duration oldestPending = Duration.ZERO;
    Map<String, Object> types = new LinkedHashMap<>();
    for (TypeStats s : stats) {
      pending += s.pending();
      dead += s.dead();
      if (s.oldestPendingAge().compareTo(oldestPending) > 0) {
        oldestPending = s.oldestPendingAge();
      }
      Map<String, Object> t = new LinkedHashMap<>();
      t.put("pending", s.pending());
      t.put("dueNow", s.dueNow());
      t.put("inFlight", s.inFlight());
      t.put("dead", s.dead());
      t.put("oldestPendingAge", s.oldestPendingAge().toString());
      t.put("paused", s.paused());
      types.put(s.bizType(), t);
    }
    List<String> exceeded = new ArrayList<>();
    if (maxOldestPendingAge != null && oldestPending.compareTo(maxOldestPendingAge) > 0) {
      exceeded.add(
          "oldest pending ticket is " + oldestPending + " old, above " + maxOldestPendingAge);
    }
    if (maxDead != null && dead > maxDead) {
      exceeded.add(dead + " dead tickets, above " + maxDead);
    }
    if (engineDown) {
      logUnhealthy(engineHealth, stuck);
      builder.down();
    } else if (exceeded.isEmpty()) {
      builder.up();
    } else {
      builder.status(thresholdStatus);
    }
    if (!exceeded.isEmpty()) {
      builder.withDetail("exceeded", exceeded);
    }
    builder
        .withDetail("replica", engine.replicaId())
        .withDetail("pending", pending)
        .withDetail("dead", dead)
        .withDetail("oldestPendingAge", oldestPending.toString())
        .withDetail("types", types);
  }

  /** One entry per loop, by name, in the engine's order. */
  private static Map<String, Object> loops(EngineHealth health) {
    Map<String, Object> loops = new LinkedHashMap<>();
    for (EngineHealth.Loop loop : health.loops()) {
      Map<String, Object> l = new LinkedHashMap<>();
      l.put("lastSuccess", loop.lastSuccess() == null ? "never" : loop.lastSuccess().toString());
      l.put("stuckAfter", String.valueOf(loop.stuckAfter()));
      l.put("stuck", loop.stuck());
      if (loop.lastError() != null) {
        l.put("lastError", loop.lastError());
      }
      loops.put(loop.name(), l);
    }
    return loops;
  }

  private static List<String> stuckLoops(EngineHealth health) {
    List<String> stuck = new ArrayList<>();
    for (EngineHealth.Loop loop : health.loops()) {
      if (loop.stuck()) {
        stuck.add(loop.name());
      }
    }
    return stuck;
  }

  private void logUnhealthy(EngineHealth health, List<String> stuck) {
    log.warn(
        "event=health_engine_unhealthy replica={} running={} stuck_loops={}",
        health.replicaId(),
        health.running(),
        String.join(",", stuck));
  }
}
