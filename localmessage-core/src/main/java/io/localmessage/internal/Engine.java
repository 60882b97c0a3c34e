package io.localmessage.internal;

import io.localmessage.BatchHandler;
import io.localmessage.ConnectionCallback;
import io.localmessage.EngineHealth;
import io.localmessage.Handler;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessageException;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.StoreException;
import io.localmessage.TransactionRequiredException;
import io.localmessage.admin.Admin;
import io.localmessage.jdbc.Dialects;
import io.localmessage.jdbc.TicketStore;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.EngineListener;
import io.localmessage.spi.TicketRow;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link LocalMessages} implementation. Not API: use {@link LocalMessages#builder}. Public only
 * so tests and sibling modules can reach {@link #halt()}.
 */
public final class Engine implements LocalMessages {
  private static final Logger log = LoggerFactory.getLogger(Engine.class);

  private final Settings settings;
  private final TicketStore store;
  private final EngineListener listener;
  private final Map<String, Registration> registrations = new ConcurrentHashMap<>();
  private final ThreadLocal<TxScope> txScope = new ThreadLocal<>();
  private final AdminImpl admin;
  private final WakeUps wakeUps;
  private volatile Dispatcher dispatcher;
  private volatile boolean started;
  private volatile boolean closed;

  /** Tickets saved inside one {@link #inTransaction} call. */
  private record TxScope(Connection connection, List<Long> ids) {}

  public Engine(Settings settings) {
    this.settings = settings;
    Dialect dialect = settings.dialect() != null ? settings.dialect() : detect(settings);
    this.store =
        new TicketStore(settings.dataSource(), dialect, settings.table(), settings.inboxTable());
    // before the listener: the metrics binding reads backlog gauges through the admin API
    this.admin = new AdminImpl(store, settings.purgeBatchSize(), this::pausedChanged);
    this.listener = Listeners.combine(settings.listener(), settings.meterRegistry(), this);
    if (settings.autoCreateSchema()) {
      store.createSchema();
    }
    this.wakeUps =
        settings.wakeUps() && dialect.name().equals("postgresql")
            ? new WakeUps(
                settings.dataSource(),
                settings.table(),
                settings.replicaId(),
                listener,
                settings.loopStuckAfter())
            : null;
  }

  private static Dialect detect(Settings settings) {
    try (Connection c = settings.dataSource().getConnection()) {
      return Dialects.detect(c);
    } catch (SQLException e) {
      throw new StoreException("cannot connect to detect the database dialect", e);
    }
  }

  public TicketStore store() {
    return store;
  }

  // ---------------------------------------------------------------- registration and lifecycle

  @Override
  public LocalMessages register(String bizType, Handler handler, HandlerConfig config) {
    Objects.requireNonNull(handler, "handler");
    return add(
        new Registration(
            NewMessage.checkBizType(bizType),
            handler,
            null,
            Objects.requireNonNull(config, "config"),
            settings.concurrency()));
  }

  @Override
  public LocalMessages registerBatch(String bizType, BatchHandler handler, HandlerConfig config) {
    Objects.requireNonNull(handler, "handler");
    return add(
        new Registration(
            NewMessage.checkBizType(bizType),
            null,
            handler,
            Objects.requireNonNull(config, "config"),
            settings.concurrency()));
  }

  private synchronized LocalMessages add(Registration r) {
    if (started || dispatcher != null) {
      throw new IllegalStateException(
          "the configuration is sealed once started (or once runOnce"
              + " ran): register '"
              + r.bizType
              + "' before");
    }
    var needed = r.config.handlerTimeout().plus(settings.writeBackMargin());
    if (settings.maxExecutionTime().compareTo(needed) < 0) {
      throw new IllegalArgumentException(
          "maxExecutionTime "
              + settings.maxExecutionTime()
              + " is shorter than the handler timeout "
              + r.config.handlerTimeout()
              + " of '"
              + r.bizType
              + "' plus the write-back margin "
              + settings.writeBackMargin()
              + ": the lease of a slow handler would stop being renewed while it still runs");
    }
    if (registrations.putIfAbsent(r.bizType, r) != null) {
      throw new IllegalArgumentException("biz type '" + r.bizType + "' is already registered");
    }
    return this;
  }

  private synchronized Dispatcher dispatcher() {
    if (closed) {
      throw new IllegalStateException("the engine is closed");
    }
    if (dispatcher == null) {
      dispatcher = new Dispatcher(settings, store, Map.copyOf(registrations), listener);
      dispatcher.wakeUps(wakeUps);
    }
    return dispatcher;
  }

  @Override
  public synchronized void start() {
    if (started) {
      return;
    }
    Dispatcher d = dispatcher();
    d.start();
    if (wakeUps != null && !registrations.isEmpty()) {
      wakeUps.listen(d::wake);
    }
    started = true;
    log.info(
        "event=started replica={} types={} concurrency={} lease={} poll_interval={}",
        settings.replicaId(),
        registrations.keySet(),
        settings.concurrency(),
        settings.lease(),
        settings.pollInterval());
  }

  @Override
  public void close() {
    Dispatcher d;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      d = dispatcher;
    }
    if (wakeUps != null) {
      wakeUps.close();
    }
    if (d != null) {
      d.close();
    }
    log.info("event=stopped replica={}", settings.replicaId());
  }

  /**
   * Stops at once as a crash would: no more write-backs, leases not released. For tests of takeover
   * after a crash; never call it in production code.
   */
  public void halt() {
    Dispatcher d;
    synchronized (this) {
      closed = true;
      d = dispatcher;
    }
    if (wakeUps != null) {
      wakeUps.close();
    }
    if (d != null) {
      d.halt();
    }
  }

  @Override
  public int runOnce() {
    return dispatcher().runOnce();
  }

  @Override
  public void dispatchNow(Collection<Long> ticketIds) {
    if (ticketIds.isEmpty() || closed) {
      return;
    }
    Dispatcher d = dispatcher;
    if (d != null && started && !registrations.isEmpty()) {
      d.hint(ticketIds); // claims what it can here; asks the others for the rest
    } else if (wakeUps != null) {
      wakeUps.requestNotify();
    }
  }

  // ---------------------------------------------------------------- saving

  @Override
  public SaveResult save(Connection connection, NewMessage message) {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(message, "message");
    TicketRow row = toRow(message);
    requireTransaction(connection);
    SaveResult result = insert(connection, message, row);
    TxScope scope = txScope.get();
    if (scope != null && scope.connection == connection && !result.duplicate()) {
      scope.ids.add(result.id());
    }
    return result;
  }

  @Override
  public List<SaveResult> saveAll(Connection connection, List<NewMessage> messages) {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(messages, "messages");
    List<TicketRow> rows = new ArrayList<>(messages.size());
    for (NewMessage m : messages) {
      // validate everything before writing anything
      rows.add(toRow(Objects.requireNonNull(m, "messages contains null")));
    }
    requireTransaction(connection);
    List<SaveResult> results = new ArrayList<>(messages.size());
    TxScope scope = txScope.get();
    for (int i = 0; i < rows.size(); i++) {
      SaveResult r = insert(connection, messages.get(i), rows.get(i));
      if (scope != null && scope.connection == connection && !r.duplicate()) {
        scope.ids.add(r.id());
      }
      results.add(r);
    }
    return results;
  }

  private TicketRow toRow(NewMessage m) {
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
    // 0: not known here, the replica that handles the ticket sets its own cap at the first claim
    int maxAttempts =
        m.maxAttempts() != null
            ? m.maxAttempts()
            : reg != null
                ? reg.config.maxAttempts()
                : settings.defaultMaxAttemptsSet() ? settings.defaultMaxAttempts() : 0;
    return new TicketRow(
        m.kind().code(),
        m.bizType(),
        m.idemKey(),
        m.aggregateId(),
        m.destination(),
        m.payload(),
        m.headers().isEmpty() ? null : HeadersCodec.encode(m.headers()),
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
              + " transaction (autocommit off); this one is in autocommit mode, so the ticket could"
              + " outlive a rolled-back business change. Nothing was written.");
    }
  }

  private SaveResult insert(Connection c, NewMessage m, TicketRow row) {
    try {
      long id = store.insert(c, row);
      if (id >= 0) {
        safeSaved(m.bizType(), false);
        log.debug("event=saved biz_type={} id={} idem_key={}", m.bizType(), id, m.idemKey());
        return new SaveResult(id, false, m.bizType(), m.idemKey());
      }
      long existing = store.findId(c, m.bizType(), m.idemKey());
      safeSaved(m.bizType(), true);
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
          "saving ticket '" + m.bizType() + "' / '" + m.idemKey() + "' failed: " + e.getMessage(),
          e);
    }
  }

  private void safeSaved(String bizType, boolean duplicate) {
    try {
      listener.saved(bizType, duplicate);
    } catch (RuntimeException e) {
      log.warn("event=listener_failed error={}", e.toString());
    }
  }

  @Override
  public <T> T inTransaction(ConnectionCallback<T> work) {
    Objects.requireNonNull(work, "work");
    List<Long> ids;
    T result;
    try (Connection c = settings.dataSource().getConnection()) {
      boolean auto = c.getAutoCommit();
      c.setAutoCommit(false);
      TxScope outer = txScope.get();
      TxScope scope = new TxScope(c, new ArrayList<>());
      txScope.set(scope);
      try {
        result = work.doInTransaction(c);
        c.commit();
        ids = scope.ids;
      } catch (Exception | Error e) {
        try {
          c.rollback();
        } catch (SQLException rollbackFailure) {
          e.addSuppressed(rollbackFailure);
        }
        if (e instanceof RuntimeException re) {
          throw re;
        }
        if (e instanceof Error err) {
          throw err;
        }
        throw new LocalMessageException("transaction work failed: " + e.getMessage(), e);
      } finally {
        if (outer == null) {
          txScope.remove();
        } else {
          txScope.set(outer);
        }
        c.setAutoCommit(auto);
      }
    } catch (SQLException e) {
      throw new StoreException("transaction failed: " + e.getMessage(), e);
    }
    dispatchNow(ids);
    return result;
  }

  @Override
  public SaveResult saveDetached(NewMessage message) {
    return inTransaction(c -> save(c, message));
  }

  // ---------------------------------------------------------------- the rest

  @Override
  public EngineHealth health() {
    Dispatcher d = dispatcher;
    List<EngineHealth.Loop> loops = new ArrayList<>(d == null ? List.of() : d.health());
    EngineHealth.Loop listening = wakeUps == null || closed ? null : wakeUps.health();
    if (listening != null) {
      loops.add(listening);
    }
    return new EngineHealth(settings.replicaId(), started && !closed, loops);
  }

  @Override
  public Admin admin() {
    return admin;
  }

  @Override
  public String schemaDdl() {
    return store.schemaDdl();
  }

  @Override
  public String replicaId() {
    return settings.replicaId();
  }

  private void pausedChanged() {
    Dispatcher d = dispatcher;
    if (d != null) {
      d.invalidatePaused();
      d.wake();
    }
    if (wakeUps != null) {
      wakeUps.requestNotify();
    }
  }
}
