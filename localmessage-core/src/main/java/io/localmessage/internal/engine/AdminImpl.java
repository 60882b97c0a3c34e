package io.localmessage.internal.engine;

import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.admin.Admin;
import io.localmessage.admin.AuditEntry;
import io.localmessage.admin.MessageView;
import io.localmessage.admin.TypeStats;
import io.localmessage.internal.store.MessageQueries;
import io.localmessage.internal.store.OperatorActions;
import io.localmessage.internal.store.Retention;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Admin} of one engine: operator actions (which check their input and audit themselves),
 * read-only queries and the retention purge; after a pause change or a requeue it wakes this
 * replica and the others.
 */
final class AdminImpl implements Admin {
  private static final Logger log = LoggerFactory.getLogger(AdminImpl.class);

  private final OperatorActions actions;
  private final MessageQueries queries;
  private final Retention retention;
  private final Settings settings;
  private final io.localmessage.spi.Dialect dialect;
  private final Runnable onChange;

  AdminImpl(
      Settings settings,
      io.localmessage.spi.Dialect dialect,
      OperatorActions actions,
      MessageQueries queries,
      Retention retention,
      Runnable onChange) {
    this.settings = settings;
    this.dialect = dialect;
    this.actions = actions;
    this.queries = queries;
    this.retention = retention;
    this.onChange = onChange;
  }

  @Override
  public void pause(String bizType, String operator, String reason) {
    actions.setPaused(bizType, true, operator, reason);
    onChange.run();
  }

  @Override
  public void resume(String bizType, String operator, String reason) {
    actions.setPaused(bizType, false, operator, reason);
    onChange.run();
  }

  @Override
  public List<String> paused() {
    return List.copyOf(new TreeSet<>(queries.pausedTypes()));
  }

  @Override
  public boolean cancel(long id, String operator, String reason) {
    return actions.cancel(id, operator, reason);
  }

  @Override
  public int requeueDead(Collection<Long> ids, String operator, String reason) {
    int moved = actions.requeueDead(ids, operator, reason);
    if (moved > 0) {
      onChange.run(); // wakes this replica and the others for the requeued messages
    }
    return moved;
  }

  @Override
  public int requeueAllDead(String bizType, String operator, String reason) {
    int moved = actions.requeueAllDead(bizType, operator, reason);
    if (moved > 0) {
      onChange.run();
    }
    return moved;
  }

  @Override
  public List<TypeStats> stats() {
    return queries.stats(queries.pausedTypes());
  }

  @Override
  public List<MessageView> listDead(String bizType, long afterId, int limit) {
    if (bizType != null) {
      NewMessage.checkBizType(bizType);
    }
    return queries.listDead(bizType, afterId, checkLimit(limit));
  }

  @Override
  public Optional<MessageView> get(long id) {
    return queries.get(id);
  }

  @Override
  public Optional<byte[]> payload(long id) {
    return queries.payload(id);
  }

  @Override
  public List<MessageView> findByAggregate(String aggregateId, int limit) {
    Objects.requireNonNull(aggregateId, "aggregateId");
    return queries.findByAggregate(aggregateId, checkLimit(limit));
  }

  @Override
  public List<MessageView> findByIdemKey(String idemKey) {
    Objects.requireNonNull(idemKey, "idemKey");
    return queries.findByIdemKey(idemKey);
  }

  @Override
  public List<AuditEntry> audit(long messageId) {
    return queries.audit(messageId);
  }

  @Override
  public int purge(MessageStatus status, Duration olderThan) {
    Objects.requireNonNull(status, "status");
    if (!status.isTerminal()) {
      throw new IllegalArgumentException(
          "only SUCCEEDED, DEAD or CANCELED messages can be purged, not " + status);
    }
    checkAge(olderThan);
    int n = retention.purge(status, null, olderThan, settings.purgeBatchSize());
    log.info("event=purge status={} older_than={} deleted={}", status, olderThan, n);
    return n;
  }

  @Override
  public int purgeInbox(Duration olderThan) {
    checkAge(olderThan);
    DataSource ds = settings.dataSource();
    int n =
        Retention.purgeInbox(
            ds, dialect, settings.inboxTable(), olderThan, settings.purgeBatchSize());
    log.info("event=purge_inbox older_than={} deleted={}", olderThan, n);
    return n;
  }

  private static void checkAge(Duration olderThan) {
    Objects.requireNonNull(olderThan, "olderThan");
    if (olderThan.isNegative()) {
      throw new IllegalArgumentException("olderThan must not be negative, was " + olderThan);
    }
    if (olderThan.compareTo(io.localmessage.NewMessage.MAX_DELAY) > 0) {
      throw new IllegalArgumentException(
          "olderThan must be at most "
              + io.localmessage.NewMessage.MAX_DELAY
              + " (100 years), was "
              + olderThan);
    }
  }

  private static int checkLimit(int limit) {
    if (limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("limit must be between 1 and 10000, was " + limit);
    }
    return limit;
  }
}
