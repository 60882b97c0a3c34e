package io.localmessage.internal.engine;

import io.localmessage.AsyncHandler;
import io.localmessage.BatchHandler;
import io.localmessage.Handler;
import io.localmessage.HandlerConfig;
import java.util.concurrent.Semaphore;

/** A registered biz type: its handler, its settings and its slots on this replica. */
final class Registration {
  final String bizType;
  final Handler handler;
  final BatchHandler batchHandler;
  final AsyncHandler asyncHandler;
  final HandlerConfig config;
  final Semaphore slots;

  /**
   * Whether this type's last general claim took all it asked for (it may have more due): a refill
   * round between fair rounds gives the free slots to such types only. Written by the claiming
   * thread under the claim lock.
   */
  volatile boolean filledLastClaim = true;

  Registration(
      String bizType,
      Handler handler,
      BatchHandler batchHandler,
      AsyncHandler asyncHandler,
      HandlerConfig config,
      int engineConcurrency) {
    this.bizType = bizType;
    this.handler = handler;
    this.batchHandler = batchHandler;
    this.asyncHandler = asyncHandler;
    this.config = config;
    int cap =
        config.concurrency() == 0
            ? engineConcurrency
            : Math.min(config.concurrency(), engineConcurrency);
    this.slots = new Semaphore(cap);
  }

  boolean isBatch() {
    return batchHandler != null;
  }

  /** Whether the handler returns a stage instead of blocking its thread. */
  boolean isAsync() {
    return asyncHandler != null;
  }
}
