package io.localmessage.internal;

import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.TicketInFlightException;
import io.localmessage.admin.Admin;
import io.localmessage.admin.AuditEntry;
import io.localmessage.admin.TicketView;
import io.localmessage.admin.TypeStats;
import io.localmessage.jdbc.TicketStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link Admin} over the store; validates operator input and logs every action. */
final class AdminImpl implements Admin {
  private static final Logger log = LoggerFactory.getLogger(AdminImpl.class);
  private static final int MAX_REASON = 512;
  private static final int MAX_OPERATOR = 128;

  private final TicketStore store;
  private final int batchSize;
  private final Runnable onPauseChange;

  AdminImpl(TicketStore store, int batchSize, Runnable onPauseChange) {
    this.store = store;
    this.batchSize = batchSize;
    this.onPauseChange = onPauseChange;
  }

  @Override
  public void pause(String bizType, String operator, String reason) {
    NewMessage.checkBizType(bizType);
    String op = operator(operator);
    String why = reason(reason);
    store.setPaused(bizType, true, op, why);
    onPauseChange.run();
    log.info("event=paused biz_type={} operator={} reason={}", bizType, op, why);
  }

  @Override
  public void resume(String bizType, String operator, String reason) {
    NewMessage.checkBizType(bizType);
    String op = operator(operator);
    String why = reason(reason);
    store.setPaused(bizType, false, op, why);
    onPauseChange.run();
    log.info("event=resumed biz_type={} operator={} reason={}", bizType, op, why);
  }

  @Override
  public List<String> paused() {
    return List.copyOf(new java.util.TreeSet<>(store.pausedTypes()));
  }

  @Override
  public boolean cancel(long id, String operator, String reason) {
    String op = operator(operator);
    String why = reason(reason);
    boolean moved;
    try {
      moved = store.cancel(id, op, why);
    } catch (TicketInFlightException e) {
      log.info(
          "event=cancel_refused id={} lease_owner={} lease_end={} operator={}",
          id,
          e.leaseOwner(),
          e.leaseEnd(),
          op);
      throw e;
    }
    log.info("event=cancel id={} moved={} operator={} reason={}", id, moved, op, why);
    return moved;
  }

  @Override
  public int requeueDead(Collection<Long> ids, String operator, String reason) {
    Objects.requireNonNull(ids, "ids");
    String op = operator(operator);
    String why = reason(reason);
    // the store works through the ids in bounded chunks, whatever the purge batch size
    int moved = store.requeueDead(new ArrayList<>(ids), op, why);
    if (moved > 0) {
      onPauseChange.run(); // wakes this replica and the others for the requeued tickets
    }
    log.info(
        "event=requeue requested={} moved={} operator={} reason={}", ids.size(), moved, op, why);
    return moved;
  }

  @Override
  public int requeueAllDead(String bizType, String operator, String reason) {
    NewMessage.checkBizType(bizType);
    String op = operator(operator);
    String why = reason(reason);
    int moved = 0;
    // bounded by what was dead when we started: tickets dying again meanwhile are left alone
    long initial =
        store.stats(java.util.Set.of()).stream()
            .filter(s -> s.bizType().equals(bizType))
            .mapToLong(TypeStats::dead)
            .sum();
    while (moved < initial) {
      List<Long> ids = store.deadIds(bizType, batchSize);
      if (ids.isEmpty()) {
        break;
      }
      int n = store.requeueDead(ids, op, why);
      if (n == 0) {
        break;
      }
      moved += n;
    }
    if (moved > 0) {
      onPauseChange.run();
    }
    log.info(
        "event=requeue_all biz_type={} moved={} operator={} reason={}", bizType, moved, op, why);
    return moved;
  }

  @Override
  public List<TypeStats> stats() {
    return store.stats(store.pausedTypes());
  }

  @Override
  public List<TicketView> listDead(String bizType, long afterId, int limit) {
    if (bizType != null) {
      NewMessage.checkBizType(bizType);
    }
    return store.listDead(bizType, afterId, checkLimit(limit));
  }

  @Override
  public Optional<TicketView> get(long id) {
    return store.get(id);
  }

  @Override
  public Optional<byte[]> payload(long id) {
    return store.payload(id);
  }

  @Override
  public List<TicketView> findByAggregate(String aggregateId, int limit) {
    Objects.requireNonNull(aggregateId, "aggregateId");
    return store.findByAggregate(aggregateId, checkLimit(limit));
  }

  @Override
  public List<TicketView> findByIdemKey(String idemKey) {
    Objects.requireNonNull(idemKey, "idemKey");
    return store.findByIdemKey(idemKey);
  }

  @Override
  public List<AuditEntry> audit(long ticketId) {
    return store.audit(ticketId);
  }

  @Override
  public int purge(MessageStatus status, Duration olderThan) {
    Objects.requireNonNull(status, "status");
    if (!status.isTerminal()) {
      throw new IllegalArgumentException(
          "only SUCCEEDED, DEAD or CANCELED tickets can be purged, not " + status);
    }
    checkAge(olderThan);
    int n = store.purge(status, null, olderThan, batchSize);
    log.info("event=purge status={} older_than={} deleted={}", status, olderThan, n);
    return n;
  }

  @Override
  public int purgeInbox(Duration olderThan) {
    checkAge(olderThan);
    int n = store.purgeInbox(olderThan, batchSize);
    log.info("event=purge_inbox older_than={} deleted={}", olderThan, n);
    return n;
  }

  private static void checkAge(Duration olderThan) {
    Objects.requireNonNull(olderThan, "olderThan");
    if (olderThan.isNegative()) {
      throw new IllegalArgumentException("olderThan must not be negative, was " + olderThan);
    }
  }

  private static int checkLimit(int limit) {
    if (limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("limit must be between 1 and 10000, was " + limit);
    }
    return limit;
  }

  /** Checked, then sanitized: the name goes into the audit table as it is written here. */
  private static String operator(String operator) {
    String clean = Texts.sanitize(operator, MAX_OPERATOR);
    if (clean == null || clean.isBlank() || operator.length() > MAX_OPERATOR) {
      throw new IllegalArgumentException(
          "operator must be a non-blank name of at most "
              + MAX_OPERATOR
              + " characters, was '"
              + Printable.escape(operator)
              + "'");
    }
    String bad = Printable.unprintable(operator);
    if (bad != null) {
      throw new IllegalArgumentException(
          "operator '" + Printable.escape(operator) + "' " + bad + ": names are printed in audits");
    }
    return clean;
  }

  private static String reason(String reason) {
    String clean = Texts.sanitize(reason, MAX_REASON);
    if (clean == null || clean.isBlank()) {
      throw new IllegalArgumentException("a reason is required for operator actions");
    }
    if (reason.length() > MAX_REASON) {
      throw new IllegalArgumentException(
          "reason is " + reason.length() + " characters, longer than the limit " + MAX_REASON);
    }
    String bad = Printable.unprintable(reason);
    if (bad != null) {
      throw new IllegalArgumentException(
          "reason "
              + bad
              + ": line breaks, control and bidirectional characters are not allowed in audits");
    }
    return clean;
  }
}
