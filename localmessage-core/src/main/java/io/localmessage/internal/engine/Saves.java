package io.localmessage.internal.engine;

import io.localmessage.MessageHeaders;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.StoreException;
import io.localmessage.TransactionRequiredException;
import io.localmessage.internal.store.MessageQueue;
import io.localmessage.spi.EngineListener;
import io.localmessage.spi.MessageRow;
import io.localmessage.spi.TracePropagation;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Saving in the caller's transaction: validates everything before writing anything, refuses an
 * autocommit connection, reports a duplicate key as a duplicate, and remembers what was saved
 * inside {@code inTransaction} so it can be dispatched after the commit.
 */
final class Saves {
  private static final Logger log = LoggerFactory.getLogger(Saves.class);

  private final Settings settings;
  private final MessageQueue queue;
  private final Map<String, Registration> registrations;
  private final EngineListener listener;
  private final TracePropagation tracing;
  private final ThreadLocal<TxScope> txScope = new ThreadLocal<>();

  /** Messages saved inside one {@code inTransaction} call. */
  record TxScope(Connection connection, List<Long> ids) {}

  Saves(
      Settings settings,
      MessageQueue queue,
      Map<String, Registration> registrations,
      EngineListener listener) {
    this.settings = settings;
    this.queue = queue;
    this.registrations = registrations;
    this.listener = listener;
    this.tracing = settings.tracing();
  }

  SaveResult save(Connection connection, NewMessage message) {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(message, "message");
    MessageRow row = toRow(message);
    requireTransaction(connection);
    if (locksAggregate(message)) {
      lockAggregate(connection, message.bizType(), message.aggregateId(), message.idemKey());
    }
    SaveResult result = insert(connection, message, row);
    remember(connection, result);
    return result;
  }

  List<SaveResult> saveAll(Connection connection, List<NewMessage> messages) {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(messages, "messages");
    List<MessageRow> rows = new ArrayList<>(messages.size());
    for (NewMessage m : messages) {
      // validate everything before writing anything
      rows.add(toRow(Objects.requireNonNull(m, "messages contains null")));
    }
    requireTransaction(connection);
    lockAggregates(connection, messages);
    List<SaveResult> results = new ArrayList<>(messages.size());
    for (int i = 0; i < rows.size(); i++) {
      SaveResult r = insert(connection, messages.get(i), rows.get(i));
      remember(connection, r);
      results.add(r);
    }
    return results;
  }

  // ------------------------------------------------------------------ ordered saves (design 8.19)

  /**
   * Whether saving {@code m} first locks its aggregate until the caller's transaction ends, so the
   * aggregate runs in the order its saves committed in. Unordered types and messages without an
   * aggregate pay nothing. A type not registered on this replica is locked as if it were ordered,
   * unless the builder named it unordered: the replica that handles it may say it is, and a lock
   * too many costs a wait, a lock too few breaks the order.
   */
  private boolean locksAggregate(NewMessage m) {
    if (m.aggregateId() == null) {
      return false;
    }
    Registration reg = registrations.get(m.bizType());
    return reg == null ? !settings.unorderedTypes().contains(m.bizType()) : reg.config.ordered();
  }

  /**
   * Locks the aggregates of a batch before any insert, each once, in ascending order of (biz type,
   * aggregate id): two batches touching the same aggregates in different orders cannot deadlock.
   */
  private void lockAggregates(Connection c, List<NewMessage> messages) {
    java.util.TreeMap<String, java.util.TreeMap<String, String>> keys = new java.util.TreeMap<>();
    for (NewMessage m : messages) {
      if (locksAggregate(m)) {
        keys.computeIfAbsent(m.bizType(), t -> new java.util.TreeMap<>())
            .putIfAbsent(m.aggregateId(), m.idemKey());
      }
    }
    for (Map.Entry<String, java.util.TreeMap<String, String>> type : keys.entrySet()) {
      for (Map.Entry<String, String> aggregate : type.getValue().entrySet()) {
        lockAggregate(c, type.getKey(), aggregate.getKey(), aggregate.getValue());
      }
    }
  }

  private void lockAggregate(Connection c, String bizType, String aggregateId, String idemKey) {
    try {
      queue.lockAggregateForSave(c, bizType, aggregateId);
    } catch (SQLException e) {
      try {
        listener.saveFailed(bizType, e);
      } catch (RuntimeException ignored) {
        // a listener must not hide the real failure
      }
      throw new StoreException(
          "saving message '"
              + bizType
              + "' / '"
              + idemKey
              + "' failed: locking its aggregate '"
              + aggregateId
              + "' for an ordered save: "
              + e.getMessage(),
          e);
    }
  }

  private void remember(Connection connection, SaveResult r) {
    TxScope scope = txScope.get();
    if (scope != null && scope.connection == connection && !r.duplicate()) {
      scope.ids.add(r.id());
    }
  }

  /** Opens a scope for the messages saved on {@code c}; returns the enclosing one. */
  TxScope open(Connection c) {
    TxScope outer = txScope.get();
    txScope.set(new TxScope(c, new ArrayList<>()));
    return outer;
  }

  /** The ids saved in the current scope. */
  List<Long> savedInScope() {
    return txScope.get().ids;
  }

  /** Closes the current scope, going back to {@code outer}. */
  void close(TxScope outer) {
    if (outer == null) {
      txScope.remove();
    } else {
      txScope.set(outer);
    }
  }

  private MessageRow toRow(NewMessage m) {
    if (m.payload().length > settings.maxPayloadBytes()) {
      throw new IllegalArgumentException(
          "payload of '"
              + m.bizType()
              + "' / '"
              + m.idemKey()
              + "' is "
              + m.payload().length
              + " bytes, larger than maxPayloadBytes "
              + settings.maxPayloadBytes());
    }
    Registration reg = registrations.get(m.bizType());
    // 0: not known here, the replica that handles the message sets its own cap at the first claim
    int maxAttempts =
        m.maxAttempts() != null
            ? m.maxAttempts()
            : reg != null
                ? reg.config.maxAttempts()
                : settings.defaultMaxAttemptsSet() ? settings.defaultMaxAttempts() : 0;
    return new MessageRow(
        m.kind(),
        m.bizType(),
        m.idemKey(),
        m.aggregateId(),
        m.destination(),
        m.payload(),
        m.headers().isEmpty() ? null : MessageHeaders.encode(m.headers()),
        maxAttempts,
        m.delay().toMillis());
  }

  private static void requireTransaction(Connection c) {
    boolean auto;
    try {
      auto = c.getAutoCommit();
    } catch (SQLException e) {
      throw new StoreException("cannot read the connection's autocommit mode", e);
    }
    if (auto) {
      throw new TransactionRequiredException(
          "save needs a connection inside the business"
              + " transaction (autocommit off); this one is in autocommit mode, so the message"
              + " could outlive a rolled-back business change. Nothing was written.");
    }
  }

  private SaveResult insert(Connection c, NewMessage m, MessageRow row) {
    TracePropagation.Span span = TracePropagation.Span.NOOP;
    if (tracing != TracePropagation.NONE) {
      Map<String, String> headers = new LinkedHashMap<>(m.headers());
      span = tracing.inject(TracePropagation.Hop.save(m.bizType(), m.idemKey()), headers);
      row = withTraceHeaders(row, m, headers);
    }
    try {
      SaveResult r = insertRow(c, m, row);
      span.end(r.duplicate() ? "duplicate" : "saved", null);
      return r;
    } catch (RuntimeException e) {
      span.end("failed", e.getMessage());
      throw e;
    }
  }

  /**
   * The row with the headers the propagation wrote. When they do not fit the headers column next to
   * the message's own, the message is saved with its own headers only: a trace is worth less than a
   * save.
   */
  private static MessageRow withTraceHeaders(
      MessageRow row, NewMessage m, Map<String, String> headers) {
    if (headers.equals(m.headers())) {
      return row;
    }
    String json = MessageHeaders.encode(headers);
    if (json.length() > NewMessage.MAX_HEADERS_LENGTH) {
      log.warn(
          "event=trace_headers_dropped biz_type={} idem_key={} length={} limit={}",
          m.bizType(),
          m.idemKey(),
          json.length(),
          NewMessage.MAX_HEADERS_LENGTH);
      return row;
    }
    return new MessageRow(
        row.kind(),
        row.bizType(),
        row.idemKey(),
        row.aggregateId(),
        row.destination(),
        row.payload(),
        json,
        row.maxAttempts(),
        row.delayMillis());
  }

  private SaveResult insertRow(Connection c, NewMessage m, MessageRow row) {
    try {
      OptionalLong id = queue.insert(c, row);
      if (id.isPresent()) {
        saved(m.bizType(), false);
        log.debug(
            "event=saved biz_type={} id={} idem_key={}", m.bizType(), id.getAsLong(), m.idemKey());
        return new SaveResult(id.getAsLong(), false, m.bizType(), m.idemKey());
      }
      long existing = queue.existingId(c, m.bizType(), m.idemKey()).orElse(-1L);
      saved(m.bizType(), true);
      log.info(
          "event=duplicate_save biz_type={} id={} idem_key={}", m.bizType(), existing, m.idemKey());
      return new SaveResult(existing, true, m.bizType(), m.idemKey());
    } catch (SQLException e) {
      try {
        listener.saveFailed(m.bizType(), e);
      } catch (RuntimeException ignored) {
        // a listener must not hide the real failure
      }
      throw new StoreException(
          "saving message '" + m.bizType() + "' / '" + m.idemKey() + "' failed: " + e.getMessage(),
          e);
    }
  }

  private void saved(String bizType, boolean duplicate) {
    try {
      listener.saved(bizType, duplicate);
    } catch (RuntimeException e) {
      log.warn("event=listener_failed error={}", e.toString());
    }
  }
}
