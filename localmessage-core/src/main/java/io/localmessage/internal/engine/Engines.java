package io.localmessage.internal.engine;

import io.localmessage.LocalMessages;
import java.util.Objects;

/**
 * The seam between the public builder and the engine, and the crash hook of the test kit. Not API:
 * applications use {@code LocalMessages.builder(...)} and, in tests, the {@code Crash} of the
 * {@code localmessage-test} module.
 */
public final class Engines {
  private Engines() {}

  /** The engine of validated {@code settings}. */
  public static LocalMessages create(Settings settings) {
    return new Engine(Objects.requireNonNull(settings, "settings"));
  }

  /**
   * Checks that this JVM has virtual threads.
   *
   * @throws IllegalArgumentException naming the JVM's version when it has none
   */
  public static void checkVirtualThreads() {
    if (!VirtualThreads.available()) {
      throw new IllegalArgumentException(
          "virtualThreads(true) needs Java "
              + VirtualThreads.SINCE
              + " or later; this JVM is "
              + Runtime.version()
              + ": leave it off (platform worker threads) or use asynchronous handlers");
    }
  }

  /**
   * Stops {@code engine} at once as a crash would: no more write-backs, leases not released.
   *
   * @throws IllegalArgumentException when {@code engine} was not built by the builder
   */
  public static void halt(LocalMessages engine) {
    if (!(engine instanceof Engine e)) {
      throw new IllegalArgumentException(
          "not an engine built by LocalMessages.builder: "
              + (engine == null ? "null" : engine.getClass().getName()));
    }
    e.halt();
  }
}
