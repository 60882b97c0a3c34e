package io.localmessage.spi;

import java.time.Duration;

/**
 * Observes the engine: metrics, tracing, tests. Every method has a no-op default and is called on
 * the engine's threads, so implementations must be fast and must not throw (a throwing listener is
 * logged and ignored). The Micrometer binding ({@code io.localmessage.metrics}) is one.
 */
public interface EngineListener {
  /** What happened to a delivery. */
  enum Result {
    /** The handler succeeded. */
    SUCCESS,
    /** A retryable failure; a retry was scheduled with the backoff. */
    RETRY,
    /** The handler said "not yet"; due again after its delay. */
    RETRY_AFTER,
    /** The handler ran past its timeout; a retry was scheduled. */
    TIMEOUT,
    /** A permanent failure: DEAD. */
    PERMANENT,
    /** A retryable failure that went DEAD because attempts or max age ran out. */
    EXHAUSTED
  }

  /** A listener that does nothing. */
  EngineListener NONE = new EngineListener() {};

  /** One listener for several: each event goes to every one of {@code listeners}, in order. */
  static EngineListener composite(java.util.List<EngineListener> listeners) {
    java.util.List<EngineListener> real =
        listeners.stream().filter(l -> l != null && l != NONE).toList();
    if (real.isEmpty()) {
      return NONE;
    }
    return real.size() == 1 ? real.get(0) : new CompositeListener(real);
  }

  /** A message was saved, or was a duplicate of an existing one. */
  default void saved(String bizType, boolean duplicate) {}

  /** A save failed in the database (bad input is not counted: it never reaches it). */
  default void saveFailed(String bizType, Throwable error) {}

  /**
   * One claim statement ran: {@code claimed} messages, of which {@code leaseReclaims} had been
   * claimed before and their lease ran out (a worker died or overran).
   */
  default void claimed(String bizType, int claimed, int leaseReclaims, Duration queryTime) {}

  /** A delivery finished with {@code result} on attempt {@code attempt}. */
  default void delivered(
      String bizType, Result result, int attempt, Duration handlerTime, Duration sinceCreated) {}

  /**
   * Write-backs that matched no row: the message was cancelled, requeued or re-claimed by another
   * replica after this replica's lease ran out. The stale outcome was dropped.
   */
  default void casConflicts(String bizType, int count) {}

  /** Messages that went DEAD because their last allowed delivery never reported back. */
  default void expiredLastAttempt(int count) {}

  /**
   * Leases of {@code count} messages whose handlers were still running were extended (one renewal
   * statement may cover several types; this is called once per type).
   */
  default void leaseRenewed(String bizType, int count) {}

  /**
   * {@code count} executions were fenced: a lease renewal found that their message had been
   * cancelled or taken over by another replica (this replica's lease had run out, for example while
   * it was frozen or cut off from the database). Their outcomes are dropped.
   */
  default void fenced(String bizType, int count) {}

  /**
   * The leases of {@code count} messages that were due for renewal could not be renewed this round:
   * the renewal statement failed (the database refused or was unreachable, the renewer's connection
   * broke, or the pool had none to give). Reported at a third of the lease, before the lease is
   * lost; the renewer tries again at its next tick. If the renewals keep failing for the rest of
   * the lease, another replica may run the messages beside the handlers still inside them.
   */
  default void leaseRenewalFailed(String bizType, int count) {}

  /**
   * {@code count} outcomes could not be written back before their lease ended (the database was
   * unreachable for longer than the lease allowed, or refused the row). The messages run again when
   * their leases end.
   */
  default void writeBackDropped(String bizType, int count) {}

  /**
   * A wake-up was sent to the other replicas (PostgreSQL {@code NOTIFY}); it covers {@code
   * requests} messages or operator actions that asked for one in the same few milliseconds.
   */
  default void wakeUpSent(int requests) {}
}
