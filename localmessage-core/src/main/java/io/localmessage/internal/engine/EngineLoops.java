package io.localmessage.internal.engine;

import io.localmessage.EngineHealth;
import io.localmessage.internal.store.MessageQueue;
import io.localmessage.internal.store.Retention;
import io.localmessage.spi.EngineListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background machinery of one engine, built once the configuration is sealed: the poller
 * ({@link ClaimLoop}) claims through the {@link Claimer} into {@link Executions}; an execution's
 * outcome goes to {@link Outcomes} and on to the {@link WriteBehind}; {@link Maintenance} sweeps
 * and purges on its own thread. This class only wires them and stops them in the right order.
 */
final class EngineLoops {
  private static final Logger log = LoggerFactory.getLogger(EngineLoops.class);

  /** How long {@link #halt()} waits for a statement its threads have under way. */
  static final Duration HALT_WAIT = Duration.ofSeconds(5);

  private final Settings settings;
  private final Map<String, Registration> registrations;
  private final Signal signal;
  private final WriteBehind writer;
  private final Executions executions;
  private final Claimer claimer;
  private final ClaimLoop claimLoop;
  private final Maintenance maintenance;

  EngineLoops(
      Settings settings,
      MessageQueue queue,
      Retention retention,
      Supplier<Set<String>> pausedTypes,
      Map<String, Registration> registrations,
      EngineListener listener,
      WakeUps wakeUps) {
    this.settings = settings;
    this.signal = new Signal(settings.ticker());
    this.registrations = registrations;
    Slots slots = new Slots(settings.concurrency(), signal);
    this.writer =
        new WriteBehind(
            queue,
            listener,
            settings.loopStuckAfter(),
            settings.writeBatchSize(),
            settings.replicaId(),
            settings.ticker(),
            this::retryDueIn);
    Outcomes outcomes = new Outcomes(settings, writer, listener);
    this.executions = new Executions(settings, registrations, queue, outcomes, slots, listener);
    this.claimer =
        new Claimer(
            settings, queue, pausedTypes, registrations, slots, executions, outcomes, listener);
    this.claimLoop =
        new ClaimLoop(settings, claimer, slots, signal, outcomes::avgHandlerNanos, wakeUps);
    this.maintenance = new Maintenance(settings, queue, retention, registrations, listener);
  }

  /**
   * The writer recorded a retry of {@code bizType} due in {@code millis}: the poller claims then.
   */
  private void retryDueIn(String bizType, long millis) {
    claimLoop.dueAt(settings.ticker().nanos() + TimeUnit.MILLISECONDS.toNanos(millis), bizType);
  }

  void start() {
    claimLoop.start();
    maintenance.start();
  }

  void dispatchNow(Collection<Long> ids) {
    claimLoop.dispatchNow(ids);
  }

  void wake() {
    claimLoop.wake();
  }

  void invalidatePaused() {
    claimer.invalidatePaused();
  }

  /** Manual mode: one sweep, one claim round, run, wait for the write-backs. */
  int runOnce() {
    if (claimLoop.stopped()) {
      throw new IllegalStateException("the engine is closed");
    }
    maintenance.maintain(true);
    List<Execution> started = new ArrayList<>();
    Claimer.Result r = claimer.claim(null, started, false);
    long longestTimeout =
        registrations.values().stream()
            .mapToLong(reg -> reg.config.handlerTimeout().toNanos())
            .max()
            .orElse(0);
    long deadline =
        settings.ticker().nanos()
            + longestTimeout
            + settings.lease().plus(settings.writeBackMargin()).toNanos();
    for (Execution e : started) {
      try {
        e.written.get(Math.max(1, deadline - settings.ticker().nanos()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        break;
      } catch (Exception ex) {
        log.warn("event=run_once_wait_failed error={}", ex.toString());
      }
    }
    return r.claimed();
  }

  /**
   * Graceful stop: stop claiming, wait for handlers, interrupt what still runs after the shutdown
   * timeout and keep the leases of handlers still inside (see {@link Executions#close()}), then
   * write what is queued and stop the rest.
   */
  void close() {
    claimLoop.stop();
    maintenance.shutdown();
    executions.close();
    writer.close(settings.writeBackMargin().plusSeconds(5));
    executions.finish();
    maintenance.shutdownNow(Duration.ofSeconds(1));
    executions.awaitWorkers();
  }

  /**
   * Stops everything at once without writing anything back, as kill -9 would. Returns once the
   * engine's own threads (poller, writer, watchdog, renewer, maintenance) have left, waiting at
   * most {@link #HALT_WAIT} for a statement under way: after a crash the process writes nothing, so
   * nothing a halted engine started may reach the database after this returns. Handler threads are
   * interrupted and abandoned: whatever they do is not written.
   */
  void halt() {
    claimLoop.markStopped();
    executions.abandonAll();
    writer.halt();
    signal.signal();
    executions.halt();
    maintenance.shutdownNow(Duration.ZERO);
    long deadline = settings.ticker().nanos() + HALT_WAIT.toNanos();
    claimLoop.join();
    writer.awaitStopped(Threads.left(settings.ticker(), deadline));
    executions.awaitLoops(Threads.left(settings.ticker(), deadline));
    maintenance.await(Threads.left(settings.ticker(), deadline));
  }

  /** The health of every loop. */
  List<EngineHealth.Loop> health() {
    return List.of(
        claimLoop.health().snapshot(),
        writer.health().snapshot(),
        executions.watchdogHealth().snapshot(),
        executions.renewerHealth().snapshot(),
        maintenance.health().snapshot());
  }
}
