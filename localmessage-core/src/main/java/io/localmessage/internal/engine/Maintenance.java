package io.localmessage.internal.engine;

import io.localmessage.MessageStatus;
import io.localmessage.internal.store.MessageQueue;
import io.localmessage.internal.store.Retention;
import io.localmessage.spi.EngineListener;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sweeps last attempts whose lease ran out to DEAD and purges expired retained successes, on its
 * own thread, so a purge that waits on a lock never stops claiming.
 */
final class Maintenance {
  private static final Logger log = LoggerFactory.getLogger(Maintenance.class);
  private static final String EXPIRED_LAST_ATTEMPT =
      "attempts exhausted: the last delivery's lease ended without an outcome"
          + " (worker crashed or overran its lease)";
  private static final Duration FULL_SWEEP_INTERVAL = Duration.ofMinutes(10);
  private static final Duration SWEEP_OVERLAP = Duration.ofSeconds(5);

  private final Settings settings;
  private final MessageQueue queue;
  private final Retention retention;
  private final Map<String, Registration> registrations;
  private final EngineListener listener;
  private final ScheduledThreadPoolExecutor thread;
  private final LoopHealth health;
  private volatile boolean running;
  // ticker readings of the last complete sweep and full sweep, meaningful once swept
  private boolean swept;
  private long sweptAt;
  private long fullSweptAt;

  Maintenance(
      Settings settings,
      MessageQueue queue,
      Retention retention,
      Map<String, Registration> registrations,
      EngineListener listener) {
    this.settings = settings;
    this.queue = queue;
    this.retention = retention;
    this.registrations = registrations;
    this.listener = listener;
    this.thread =
        new ScheduledThreadPoolExecutor(1, Threads.named("lm-maintenance-" + settings.replicaId()));
    this.health =
        new LoopHealth(
            "maintenance",
            settings.ticker(),
            Threads.max(settings.loopStuckAfter(), settings.maintenanceInterval().multipliedBy(3)),
            () -> true,
            () -> running);
  }

  LoopHealth health() {
    return health;
  }

  void start() {
    health.success(); // judged from the start, not from when the engine was built
    running = true;
    long every = settings.maintenanceInterval().toMillis();
    thread.scheduleWithFixedDelay(this::maintainSafely, 0, every, TimeUnit.MILLISECONDS);
  }

  private void maintainSafely() {
    try {
      maintain(false);
      health.success();
    } catch (Throwable t) {
      health.failure(t);
      log.warn(
          "event=maintenance_failed replica={} error={}",
          settings.replicaId(),
          Threads.describe(t));
    }
  }

  /**
   * Sweeps last attempts whose lease ran out to DEAD and purges expired retained successes. The
   * sweep looks at every due message on the first call, every {@link #FULL_SWEEP_INTERVAL} (a
   * safety net for rows edited by hand) and whenever {@code full}; otherwise only at leases that
   * ended since the last complete sweep, plus {@link #SWEEP_OVERLAP} for clock skew.
   */
  synchronized void maintain(boolean full) {
    long now = settings.ticker().nanos();
    boolean fullSweep = full || !swept || now - fullSweptAt >= FULL_SWEEP_INTERVAL.toNanos();
    long since = sweptAt;
    MessageQueue.Sweep sweep =
        queue.expireExhausted(
            registrations.keySet(),
            EXPIRED_LAST_ATTEMPT,
            fullSweep
                ? null
                : () ->
                    TimeUnit.NANOSECONDS.toMillis(settings.ticker().nanos() - since)
                        + SWEEP_OVERLAP.toMillis());
    if (!sweep.limited()) {
      // the next window starts here; after a limited sweep it keeps its start, so the candidates
      // left over are found next time
      sweptAt = now;
      swept = true;
      if (fullSweep) {
        fullSweptAt = now;
      }
    }
    int expired = sweep.expired();
    if (expired > 0) {
      log.warn("event=expired_last_attempt tickets={}", expired);
      Threads.safe(() -> listener.expiredLastAttempt(expired));
    }
    for (Registration r : registrations.values()) {
      if (!r.config.retainSucceeded().isZero()) {
        retention.purge(
            MessageStatus.SUCCEEDED,
            r.bizType,
            r.config.retainSucceeded(),
            settings.purgeBatchSize());
      }
    }
  }

  /** Lets a running sweep finish; no new one starts. */
  void shutdown() {
    running = false;
    thread.shutdown();
  }

  /** Stops at once and waits a moment for a sweep under way. */
  void shutdownNow(Duration wait) {
    running = false;
    thread.shutdownNow();
    if (!wait.isZero()) {
      Threads.await(thread, wait);
    }
  }

  /** Waits at most {@code timeout} for a sweep or purge under way (after a shutdown). */
  void await(Duration timeout) {
    Threads.await(thread, timeout);
  }
}
