package io.localmessage.spring.internal;

import io.localmessage.LocalMessages;
import java.util.Objects;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the workers with the application context and stops them with it: {@link
 * LocalMessages#close()} stops claiming, waits for in-flight handlers up to the shutdown timeout
 * and releases the leases still held, so other replicas take those messages at once. Not API.
 */
public final class EngineLifecycle implements SmartLifecycle {
  /**
   * Before the web server starts and after it stopped (it stops at DEFAULT_PHASE - 2048): requests
   * that finish during its graceful shutdown still get their messages dispatched here.
   */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

  private final LocalMessages engine;
  private final boolean autoStartup;
  private volatile boolean running;

  public EngineLifecycle(LocalMessages engine, boolean autoStartup) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.autoStartup = autoStartup;
  }

  @Override
  public void start() {
    engine.start();
    running = true;
  }

  /** Synchronous on purpose: the data source must outlive the lease release. */
  @Override
  public void stop() {
    running = false;
    engine.close();
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public boolean isAutoStartup() {
    return autoStartup;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }
}
