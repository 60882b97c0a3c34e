package io.localmessage.internal.metrics;

import io.localmessage.admin.Admin;
import io.localmessage.admin.TypeStats;
import io.localmessage.spi.EngineListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;

/**
 * The Micrometer meters of the engine, named {@code localmessage.*} and tagged by {@code biz_type}
 * (the names are listed in the README). Backlog gauges read the admin stats, cached for {@link
 * #STATS_TTL} so a scrape costs at most one query. Bound by {@code
 * LocalMessagesBuilder.meterRegistry}.
 */
public final class MicrometerMetrics implements EngineListener {
  public static final Duration STATS_TTL = Duration.ofSeconds(5);
  private static final String P = "localmessage.";

  private final MeterRegistry registry;
  private final Admin admin;
  private final Map<String, Boolean> gauged = new ConcurrentHashMap<>();
  private volatile List<TypeStats> stats = List.of();
  // a System.nanoTime() reading of the last successful read, meaningful once read
  private volatile boolean statsRead;
  private volatile long statsAt;

  private MicrometerMetrics(MeterRegistry registry, Admin admin) {
    this.registry = registry;
    this.admin = admin;
    // read on every scrape: it discovers the types in the table, so a replica that has neither
    // saved nor claimed a type since it started (a type with only dead letters after a restart)
    // still exports that type's backlog and dead-letter gauges
    Gauge.builder(P + "types", this, MicrometerMetrics::typesInTable)
        .description("biz types with messages in the table, as of the last backlog read")
        .register(registry);
  }

  /** Binds to {@code registry}, which must be a Micrometer {@link MeterRegistry}. */
  public static EngineListener bind(Object registry, Admin admin) {
    if (!(registry instanceof MeterRegistry r)) {
      throw new IllegalArgumentException(
          "meterRegistry must be an io.micrometer.core.instrument"
              + ".MeterRegistry, was "
              + registry.getClass().getName());
    }
    return new MicrometerMetrics(r, admin);
  }

  @Override
  public void saved(String bizType, boolean duplicate) {
    gauges(bizType);
    count("saves", bizType, 1);
    if (duplicate) {
      count("saves.duplicate", bizType, 1);
    }
  }

  @Override
  public void saveFailed(String bizType, Throwable error) {
    count("saves.failed", bizType, 1);
  }

  @Override
  public void claimed(String bizType, int claimed, int leaseReclaims, Duration queryTime) {
    gauges(bizType);
    Timer.builder(P + "claim.duration")
        .tag("biz_type", bizType)
        .register(registry)
        .record(queryTime);
    count("claimed", bizType, claimed);
    if (leaseReclaims > 0) {
      count("lease.reclaims", bizType, leaseReclaims);
    }
  }

  @Override
  public void delivered(
      String bizType, Result result, int attempt, Duration handlerTime, Duration sinceCreated) {
    String outcome = result.name().toLowerCase(java.util.Locale.ROOT);
    Counter.builder(P + "deliveries")
        .tag("biz_type", bizType)
        .tag("result", outcome)
        .register(registry)
        .increment();
    Timer.builder(P + "handler.duration")
        .tag("biz_type", bizType)
        .tag("result", outcome)
        .register(registry)
        .record(handlerTime);
    if (result == Result.SUCCESS) {
      DistributionSummary.builder(P + "attempts.per.success")
          .tag("biz_type", bizType)
          .register(registry)
          .record(attempt);
      Timer.builder(P + "end.to.end")
          .description("message created_at to handler success")
          .tag("biz_type", bizType)
          .register(registry)
          .record(sinceCreated);
    }
  }

  @Override
  public void casConflicts(String bizType, int count) {
    count("cas.conflicts", bizType, count);
  }

  @Override
  public void leaseRenewed(String bizType, int count) {
    count("lease.renewals", bizType, count);
  }

  @Override
  public void fenced(String bizType, int count) {
    count("fenced", bizType, count);
  }

  @Override
  public void leaseRenewalFailed(String bizType, int count) {
    count("lease.renewal.failures", bizType, count);
  }

  @Override
  public void writeBackDropped(String bizType, int count) {
    count("writeback.dropped", bizType, count);
  }

  @Override
  public void wakeUpSent(int requests) {
    Counter.builder(P + "wakeups.sent").register(registry).increment();
    Counter.builder(P + "wakeups.requested").register(registry).increment(requests);
  }

  @Override
  public void expiredLastAttempt(int count) {
    Counter.builder(P + "expired.last.attempt").register(registry).increment(count);
  }

  private void count(String name, String bizType, double amount) {
    Counter.builder(P + name).tag("biz_type", bizType).register(registry).increment(amount);
  }

  private void gauges(String bizType) {
    if (gauged.putIfAbsent(bizType, Boolean.TRUE) != null) {
      return;
    }
    gauge("pending", bizType, s -> s.pending());
    gauge("due", bizType, s -> s.dueNow());
    gauge("in.flight", bizType, s -> s.inFlight());
    gauge("dead", bizType, s -> s.dead());
    gauge("oldest.pending.age.seconds", bizType, s -> s.oldestPendingAge().toMillis() / 1000.0);
    gauge("oldest.dead.age.seconds", bizType, s -> s.oldestDeadAge().toMillis() / 1000.0);
  }

  private void gauge(String name, String bizType, ToDoubleFunction<TypeStats> f) {
    Gauge.builder(P + name, this, m -> m.read(bizType, f))
        .tag("biz_type", bizType)
        .register(registry);
  }

  private double typesInTable() {
    return refresh() ? stats.size() : Double.NaN;
  }

  /** Reads the backlog when the cached one is stale; false when it cannot be read. */
  private boolean refresh() {
    long now = System.nanoTime();
    if (!statsRead || now - statsAt > STATS_TTL.toNanos()) {
      List<TypeStats> read;
      try {
        read = admin.stats();
      } catch (RuntimeException e) {
        return false;
      }
      stats = read;
      statsAt = now;
      statsRead = true;
      for (TypeStats s : read) {
        gauges(s.bizType()); // a type first seen in the table gets its gauges
      }
    }
    return true;
  }

  private double read(String bizType, ToDoubleFunction<TypeStats> f) {
    if (!refresh()) {
      return Double.NaN;
    }
    for (TypeStats s : stats) {
      if (s.bizType().equals(bizType)) {
        return f.applyAsDouble(s);
      }
    }
    return 0;
  }
}
