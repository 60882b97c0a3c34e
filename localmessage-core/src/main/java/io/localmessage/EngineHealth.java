package io.localmessage;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The state of one engine's background loops, for health checks. A loop is <em>stuck</em> when its
 * thread died or it has not completed an iteration successfully for longer than its {@code
 * stuckAfter} (for example, the poller while the database is unreachable). Meant for readiness
 * checks and alerts; a restart rarely cures a database outage, so be careful using it for liveness.
 *
 * @param replicaId the engine's replica id
 * @param running whether {@link LocalMessages#start()} was called and {@link LocalMessages#close()}
 *     was not
 * @param loops every loop of the engine; empty before the engine first started or ran once
 */
public record EngineHealth(String replicaId, boolean running, List<Loop> loops) {

  /** Copies {@code loops}. */
  public EngineHealth {
    loops = List.copyOf(loops);
  }

  /** True when no loop is stuck. */
  public boolean healthy() {
    return loops.stream().noneMatch(Loop::stuck);
  }

  /**
   * One loop.
   *
   * @param name {@code poller}, {@code writer}, {@code watchdog}, {@code renewer} or {@code
   *     maintenance}
   * @param lastSuccess when it last completed an iteration without error ({@code null}: never)
   * @param stuckAfter how long without success makes it stuck
   * @param stuck whether it is stuck now
   * @param lastError the last error it survived, or {@code null}
   */
  public record Loop(
      String name, Instant lastSuccess, Duration stuckAfter, boolean stuck, String lastError) {}
}
