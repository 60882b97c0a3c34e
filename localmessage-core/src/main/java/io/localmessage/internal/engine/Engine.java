package io.localmessage.internal.engine;

import io.localmessage.AsyncHandler;
import io.localmessage.BatchHandler;
import io.localmessage.ConnectionCallback;
import io.localmessage.EngineHealth;
import io.localmessage.Handler;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.admin.Admin;
import io.localmessage.internal.store.MessageQueries;
import io.localmessage.internal.store.MessageQueue;
import io.localmessage.internal.store.OperatorActions;
import io.localmessage.internal.store.Retention;
import io.localmessage.internal.store.SchemaScripts;
import io.localmessage.internal.store.Tables;
import io.localmessage.internal.store.Transactions;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.Dialects;
import io.localmessage.spi.EngineListener;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link LocalMessages} of one service: registration until the configuration is sealed, the
 * lifecycle of its {@link EngineLoops}, saving ({@link Saves}) and the admin API. Built by {@link
 * Engines#create}.
 */
final class Engine implements LocalMessages {
  private static final Logger log = LoggerFactory.getLogger(Engine.class);

  private final Settings settings;
  private final Dialect dialect;
  private final Tables tables;
  private final MessageQueue queue;
  private final MessageQueries queries;
  private final Retention retention;
  private final EngineListener listener;
  private final Map<String, Registration> registrations = new ConcurrentHashMap<>();
  private final Saves saves;
  private final AdminImpl admin;
  private final WakeUps wakeUps;
  private volatile EngineLoops loops;
  private volatile boolean started;
  private volatile boolean closed;

  Engine(Settings settings) {
    this.settings = settings;
    this.dialect =
        settings.dialect() != null ? settings.dialect() : Dialects.detect(settings.dataSource());
    if (settings.dialect() == null || settings.autoCreateSchema()) {
      // only where the build talks to the database anyway: a replica may start while it is away
      checkPayloadFitsStatements(settings, dialect);
    }
    this.tables = Tables.of(settings.table(), settings.inboxTable());
    this.queue = new MessageQueue(settings.dataSource(), dialect, tables);
    this.queries = new MessageQueries(settings.dataSource(), dialect, tables);
    this.retention = new Retention(settings.dataSource(), dialect, tables.message());
    // before the listener: the metrics binding reads backlog gauges through the admin API
    this.admin =
        new AdminImpl(
            settings,
            dialect,
            new OperatorActions(settings.dataSource(), dialect, tables, settings.purgeBatchSize()),
            queries,
            retention,
            this::pausedChanged);
    this.listener = Listeners.combine(settings.listener(), settings.meterRegistry(), admin);
    this.saves = new Saves(settings, queue, registrations, listener);
    if (settings.autoCreateSchema()) {
      SchemaScripts.create(settings.dataSource(), dialect, tables);
    }
    this.wakeUps =
        settings.wakeUps() && dialect.name().equals("postgresql")
            ? new WakeUps(
                settings.dataSource(),
                settings.table(),
                settings.replicaId(),
                listener,
                settings.loopStuckAfter(),
                settings.ticker())
            : null;
  }

  /**
   * Bytes a save's statement needs besides the payload: the headers (at most {@link
   * NewMessage#MAX_HEADERS_LENGTH} characters, 4 bytes each), the other columns and the statement.
   */
  static final int ROW_ROOM = 64 * 1024;

  /**
   * Refuses a {@code maxPayloadBytes} whose saves the server would refuse: MySQL/MariaDB close the
   * connection on a statement past {@code max_allowed_packet}. A payload may take twice its size in
   * the statement (a driver that escapes binary into the statement's text), so the largest allowed
   * is half the packet less the room of the rest of the row.
   */
  private static void checkPayloadFitsStatements(Settings settings, Dialect dialect) {
    java.util.OptionalLong packet;
    try (Connection c = Transactions.autocommit(settings.dataSource())) {
      packet = dialect.maxStatementBytes(c);
    } catch (java.sql.SQLException | RuntimeException e) {
      log.debug("event=statement_limit_unknown error={}", e.toString());
      return;
    }
    if (packet.isEmpty()) {
      return;
    }
    long fits = (packet.getAsLong() - ROW_ROOM) / 2;
    if (settings.maxPayloadBytes() > fits) {
      throw new IllegalArgumentException(
          "maxPayloadBytes "
              + settings.maxPayloadBytes()
              + " does not fit the database's max_allowed_packet of "
              + packet.getAsLong()
              + " bytes (a payload may take twice its size in the statement, plus "
              + ROW_ROOM
              + " bytes for the rest of the row): a larger save would be refused and its connection"
              + " closed. Set maxPayloadBytes to at most "
              + Math.max(0, fits)
              + " or raise max_allowed_packet");
    }
  }

  // ---------------------------------------------------------------- registration and lifecycle

  @Override
  public LocalMessages register(String bizType, Handler handler, HandlerConfig config) {
    return add(bizType, Objects.requireNonNull(handler, "handler"), null, null, config);
  }

  @Override
  public LocalMessages registerBatch(String bizType, BatchHandler handler, HandlerConfig config) {
    return add(bizType, null, Objects.requireNonNull(handler, "handler"), null, config);
  }

  @Override
  public LocalMessages registerAsync(String bizType, AsyncHandler handler, HandlerConfig config) {
    return add(bizType, null, null, Objects.requireNonNull(handler, "handler"), config);
  }

  /** One registration of exactly one of the three handler kinds. */
  private LocalMessages add(
      String bizType,
      Handler single,
      BatchHandler batch,
      AsyncHandler async,
      HandlerConfig config) {
    return add(
        new Registration(
            NewMessage.checkBizType(bizType),
            single,
            batch,
            async,
            Objects.requireNonNull(config, "config"),
            settings.concurrency()));
  }

  private synchronized LocalMessages add(Registration r) {
    if (started || loops != null) {
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
    if (r.config.ordered() && settings.unorderedTypes().contains(r.bizType)) {
      throw new IllegalArgumentException(
          "biz type '"
              + r.bizType
              + "' is named unordered (LocalMessagesBuilder.unorderedTypes), so its saves do not"
              + " lock the aggregate; it cannot be registered ordered here");
    }
    if (registrations.putIfAbsent(r.bizType, r) != null) {
      throw new IllegalArgumentException("biz type '" + r.bizType + "' is already registered");
    }
    return this;
  }

  private synchronized EngineLoops loops() {
    if (closed) {
      throw new IllegalStateException("the engine is closed");
    }
    if (loops == null) {
      loops =
          new EngineLoops(
              settings,
              queue,
              retention,
              queries::pausedTypes,
              Map.copyOf(registrations),
              listener,
              wakeUps);
    }
    return loops;
  }

  @Override
  public synchronized void start() {
    if (started) {
      return;
    }
    EngineLoops l = loops();
    l.start();
    if (wakeUps != null && !registrations.isEmpty()) {
      wakeUps.listen(l::wake);
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
    EngineLoops l;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      l = loops;
    }
    if (wakeUps != null) {
      wakeUps.close();
    }
    if (l != null) {
      l.close();
    }
    log.info("event=stopped replica={}", settings.replicaId());
  }

  /** Stops at once as a crash would: no more write-backs, leases not released. */
  void halt() {
    EngineLoops l;
    synchronized (this) {
      closed = true;
      l = loops;
    }
    if (wakeUps != null) {
      wakeUps.close();
    }
    if (l != null) {
      l.halt();
    }
  }

  @Override
  public int runOnce() {
    return loops().runOnce();
  }

  @Override
  public void dispatchNow(Collection<Long> ids) {
    if (ids.isEmpty() || closed) {
      return;
    }
    EngineLoops l = loops;
    if (l != null && started && !registrations.isEmpty()) {
      l.dispatchNow(ids); // claims what it can here; asks the others for the rest
    } else if (wakeUps != null) {
      wakeUps.requestNotify();
    }
  }

  // ---------------------------------------------------------------- saving

  @Override
  public SaveResult save(Connection connection, NewMessage message) {
    return saves.save(connection, message);
  }

  @Override
  public List<SaveResult> saveAll(Connection connection, List<NewMessage> messages) {
    return saves.saveAll(connection, messages);
  }

  @Override
  public <T> T inTransaction(ConnectionCallback<T> work) {
    Objects.requireNonNull(work, "work");
    List<List<Long>> saved = new ArrayList<>(1);
    T result =
        Transactions.run(
            settings.dataSource(),
            dialect,
            "transaction work",
            c -> {
              Saves.TxScope outer = saves.open(c);
              try {
                T r = work.doInTransaction(c);
                saved.add(saves.savedInScope());
                return r;
              } finally {
                saves.close(outer);
              }
            });
    // only after the commit: a message of a rolled-back transaction never starts
    dispatchNow(saved.get(0));
    return result;
  }

  @Override
  public SaveResult saveDetached(NewMessage message) {
    return inTransaction(c -> save(c, message));
  }

  // ---------------------------------------------------------------- the rest

  @Override
  public EngineHealth health() {
    EngineLoops l = loops;
    List<EngineHealth.Loop> all = new ArrayList<>(l == null ? List.of() : l.health());
    EngineHealth.Loop listening = wakeUps == null || closed ? null : wakeUps.health();
    if (listening != null) {
      all.add(listening);
    }
    return new EngineHealth(settings.replicaId(), started && !closed, all);
  }

  @Override
  public Admin admin() {
    return admin;
  }

  @Override
  public String schemaDdl() {
    return SchemaScripts.ddl(dialect, tables);
  }

  @Override
  public String replicaId() {
    return settings.replicaId();
  }

  private void pausedChanged() {
    EngineLoops l = loops;
    if (l != null) {
      l.invalidatePaused();
      l.wake();
    }
    if (wakeUps != null) {
      wakeUps.requestNotify();
    }
  }
}
