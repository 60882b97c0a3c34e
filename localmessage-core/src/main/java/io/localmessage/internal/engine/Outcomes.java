package io.localmessage.internal.engine;

import io.localmessage.MessageStatus;
import io.localmessage.Outcome;
import io.localmessage.Texts;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.EngineListener;
import io.localmessage.spi.Transition;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every write-back of this replica is decided and handed to the {@link WriteBehind}: the
 * outcome of an execution whose thread has left the handler, a kept lease at shutdown, a claimed
 * row released or buried. Each write gets its deadline here: the lease end minus the write-back
 * margin.
 */
final class Outcomes {
  private static final Logger log = LoggerFactory.getLogger(Outcomes.class);

  private final String replicaId;
  private final OutcomePolicy policy;
  private final WriteBehind writer;
  private final EngineListener listener;
  private final long writeBackMarginNanos;
  private final long leaseNanos;
  private final Ticker ticker;
  // moving average of handler call times (1/16 weight per call; racy updates only blur it)
  private volatile long avgHandlerNanos;

  Outcomes(Settings settings, WriteBehind writer, EngineListener listener) {
    this.replicaId = settings.replicaId();
    this.policy = new OutcomePolicy(settings.redactor());
    this.writer = writer;
    this.listener = listener;
    this.writeBackMarginNanos = settings.writeBackMargin().toNanos();
    this.leaseNanos = settings.lease().toNanos();
    this.ticker = settings.ticker();
  }

  /** The average time of a handler call lately. */
  long avgHandlerNanos() {
    return avgHandlerNanos;
  }

  /**
   * The outcomes of an execution whose thread has left the handler, one per message: decided,
   * counted, logged and queued for writing. {@code execution.written} completes when every one of
   * them is written, dropped or conflicting.
   */
  void decided(Execution e, List<Outcome> outcomes, Execution.Ending ending, Duration took) {
    long avg = avgHandlerNanos;
    // the first call sets the average: starting from zero it would take dozens of calls to tell a
    // slow handler from a fast one
    avgHandlerNanos = avg == 0 ? Math.max(1, took.toNanos()) : avg + ((took.toNanos() - avg) >> 4);
    AtomicInteger pending = new AtomicInteger(e.messages.size());
    Runnable onWritten =
        () -> {
          if (pending.decrementAndGet() == 0) {
            e.written.complete(null);
          }
        };
    for (int i = 0; i < e.messages.size(); i++) {
      ClaimedMessage m = e.messages.get(i);
      if (m.fenced()) {
        // taken over while this replica's lease had run out: the other delivery owns the message
        log.info(
            "event=fenced_outcome_dropped biz_type={} id={} idem_key={} attempt={}",
            m.bizType(),
            m.id(),
            m.idemKey(),
            m.attempt());
        onWritten.run();
        continue;
      }
      Outcome outcome = outcomes.get(i);
      OutcomePolicy.Decision decision;
      if (ending == Execution.Ending.SHUTDOWN && outcome.type() != Outcome.Type.SUCCESS) {
        decision = policy.givenBack(m.row(), "interrupted by the shutdown of replica " + replicaId);
      } else {
        decision = policy.decide(e.registration.config, m.row(), outcome, ending.timedOut(), took);
        if (ending == Execution.Ending.TIMED_OUT_PENDING) {
          decision = notBeforeLeaseEnd(m, decision);
        }
      }
      OutcomePolicy.Decision d = decision;
      logDecision(m, d);
      if (d.result() != null) {
        Duration sinceCreated = Duration.between(m.createdAt(), m.row().dbNow()).plus(took);
        Threads.safe(
            () -> listener.delivered(m.bizType(), d.result(), m.attempt(), took, sinceCreated));
      }
      // the lease is renewed until the outcome is written (LeaseRenewer), so the deadline follows
      writer.submit(
          new WriteItem(
              m.bizType(),
              d.writeBack(),
              onWritten,
              () -> m.leaseEndNanos() - writeBackMarginNanos));
    }
  }

  /**
   * A retry of an expired asynchronous stage, whose effect may still be under way, is not due
   * before the message's current lease ends: due at the lease end (kept as the database has it)
   * unless the backoff is due later anyway. A second of slack covers the difference between this
   * replica's estimate of the lease end and the database's.
   */
  private OutcomePolicy.Decision notBeforeLeaseEnd(ClaimedMessage m, OutcomePolicy.Decision d) {
    if (!(d.writeBack() instanceof WriteBack.Update u) || !u.makesDue()) {
      return d;
    }
    Transition t = u.transition();
    long leftMillis =
        java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(m.leaseEndNanos() - ticker.nanos());
    if (t.delayMillis() > leftMillis + 1000) {
      return d;
    }
    return new OutcomePolicy.Decision(
        new WriteBack.Update(
            new Transition(
                t.id(),
                t.version(),
                t.status(),
                t.delayMillis(),
                t.lastError(),
                t.attemptsDelta(),
                true)),
        d.result(),
        d.error());
  }

  /**
   * Shutdown gave up on an execution still inside its handler: its attempt is given back and its
   * version bumped, so its late outcome is dropped, but the lease end and owner stay, so nobody
   * runs the message before the lease ends.
   */
  void keepLease(ClaimedMessage m) {
    Transition keep =
        new Transition(
            m.id(),
            m.row().version(),
            MessageStatus.PENDING,
            0,
            Texts.sanitize(
                "interrupted by the shutdown of replica "
                    + replicaId
                    + " while the handler was still running; the attempt was given back",
                OutcomePolicy.MAX_ERROR_LENGTH),
            -1,
            true);
    writer.submit(
        new WriteItem(
            m.bizType(),
            new WriteBack.Update(keep),
            () -> {},
            m.leaseEndNanos() - writeBackMarginNanos));
  }

  /**
   * A claimed row that never reached a worker: due again at once with its attempt given back,
   * instead of waiting a whole lease with the attempt spent.
   */
  void release(ClaimedRow row, long claimStartNanos) {
    writer.submit(
        new WriteItem(
            row.bizType(),
            new WriteBack.Update(
                new Transition(
                    row.id(),
                    row.version(),
                    MessageStatus.PENDING,
                    0,
                    "not started: released by the claim",
                    -1)),
            () -> {},
            claimStartNanos + leaseNanos - writeBackMarginNanos));
  }

  /** A claimed row the engine cannot read: DEAD with the reason, never a stalled replica. */
  void bury(ClaimedRow row, long claimStartNanos, RuntimeException why) {
    String reason =
        Texts.sanitize(
            "cannot decode the message: " + why.getMessage(), OutcomePolicy.MAX_ERROR_LENGTH);
    log.warn(
        "event=undecodable_ticket biz_type={} id={} idem_key={} error={}",
        row.bizType(),
        row.id(),
        Texts.sanitize(row.idemKey(), 128),
        reason);
    writer.submit(
        new WriteItem(
            row.bizType(),
            new WriteBack.Update(
                new Transition(row.id(), row.version(), MessageStatus.DEAD, 0, reason, 0)),
            () -> {},
            claimStartNanos + leaseNanos - writeBackMarginNanos));
  }

  private static void logDecision(ClaimedMessage m, OutcomePolicy.Decision d) {
    if (d.result() == null) {
      log.info(
          "event=attempt_given_back biz_type={} id={} idem_key={} attempt={} error={}",
          m.bizType(),
          m.id(),
          m.idemKey(),
          m.attempt(),
          d.error());
      return;
    }
    switch (d.result()) {
      case SUCCESS ->
          log.debug(
              "event=delivered biz_type={} id={} idem_key={} attempt={}",
              m.bizType(),
              m.id(),
              m.idemKey(),
              m.attempt());
      case RETRY, TIMEOUT, RETRY_AFTER ->
          log.info(
              "event=retry_scheduled biz_type={} id={} idem_key={} attempt={} result={} error={}",
              m.bizType(),
              m.id(),
              m.idemKey(),
              m.attempt(),
              d.result(),
              d.error());
      case PERMANENT, EXHAUSTED ->
          log.warn(
              "event=dead biz_type={} id={} idem_key={} attempt={} result={} error={}",
              m.bizType(),
              m.id(),
              m.idemKey(),
              m.attempt(),
              d.result(),
              d.error());
    }
  }
}
