package io.localmessage.test;

import io.localmessage.LocalMessages;
import io.localmessage.internal.engine.Engines;

/**
 * The crash hook: stops an engine the way {@code kill -9} stops its process, for tests (and chaos
 * demos) of what the other replicas do after a crash.
 */
public final class Crash {
  private Crash() {}

  /**
   * Stops {@code engine} at once: no outcome is written back any more, no lease is released or
   * renewed, nothing is claimed. Handlers still running keep running on their threads, but what
   * they return is dropped. The messages they held become due again on other replicas when their
   * leases end, exactly as after a crash. The engine cannot be used afterwards. Never call this in
   * production code: {@link LocalMessages#close()} is the graceful stop.
   *
   * @throws IllegalArgumentException when {@code engine} was not built by {@link
   *     LocalMessages#builder}
   */
  public static void halt(LocalMessages engine) {
    Engines.halt(engine);
  }
}
