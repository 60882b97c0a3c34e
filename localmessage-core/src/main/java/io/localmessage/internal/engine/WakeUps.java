package io.localmessage.internal.engine;

import io.localmessage.internal.store.Transactions;
import io.localmessage.spi.EngineListener;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cross-replica wake-ups on PostgreSQL with {@code LISTEN}/{@code NOTIFY}, so a message saved on a
 * replica that will not run it itself starts on another within milliseconds instead of a poll
 * interval.
 *
 * <p>Sending: after a commit the engine knows of ({@code inTransaction}, {@code dispatchNow}, the
 * Spring after-commit hook) and only for messages this replica did not claim at once (type not
 * registered here, or no free slot), and after operator actions (requeue, resume). Requests are
 * coalesced: at most one {@code NOTIFY} per {@link #COALESCE} window per replica, on a pooled
 * connection in autocommit, outside the business transaction (which so pays nothing for it). The
 * first request after a quiet window is sent at once.
 *
 * <p>Receiving: one connection taken from the data source for as long as the engine runs (size the
 * pool one larger), listening on a channel named after the message table. A notification from
 * another replica wakes the poller for one claim round. When the connection drops, it reconnects
 * with backoff (100 ms doubling to 5 s) and polls once after reconnecting; polling at the
 * configured interval goes on meanwhile, so a lost notification costs at most what polling costs
 * without wake-ups.
 */
final class WakeUps {
  private static final Logger log = LoggerFactory.getLogger(WakeUps.class);
  static final Duration COALESCE = Duration.ofMillis(5);
  private static final int LISTEN_WAIT_MS = 500;

  private final DataSource dataSource;
  private final String table;
  private volatile String channel;
  private final String replicaId;
  private final EngineListener listener;
  private final LoopHealth health;
  private final ScheduledThreadPoolExecutor sender;
  private final AtomicBoolean flushScheduled = new AtomicBoolean();
  private final AtomicInteger requestsSinceFlush = new AtomicInteger();
  private final Ticker ticker;
  private volatile long lastSentNanos;
  private volatile boolean running;
  private volatile Thread listenerThread;
  private volatile Connection listening;

  WakeUps(
      DataSource dataSource,
      String table,
      String replicaId,
      EngineListener listener,
      Duration stuckAfter,
      Ticker ticker) {
    this.ticker = ticker;
    this.lastSentNanos = ticker.nanos() - COALESCE.toNanos();
    this.dataSource = dataSource;
    this.table = table;
    this.replicaId = replicaId;
    this.listener = listener;
    this.health = new LoopHealth("listener", ticker, stuckAfter, this::listenerAlive);
    this.sender = new ScheduledThreadPoolExecutor(1, daemon("lm-notify-" + replicaId));
    this.sender.setRemoveOnCancelPolicy(true);
  }

  /**
   * The channel of a message table: {@code lm_}, the schema the connection works in and the table
   * name (schema-qualified names as they are), so engines on same-named tables in different schemas
   * of one database do not wake each other. At most 63 characters, the rest hashed.
   */
  static String channelOf(String schema, String table) {
    String qualified = table.contains(".") || schema == null ? table : schema + "." + table;
    String name = "lm_" + qualified.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
    if (name.length() <= 63) {
      return name;
    }
    String hash = Integer.toHexString(qualified.hashCode());
    return name.substring(0, 62 - hash.length()) + "_" + hash;
  }

  private String channel(Connection c) throws SQLException {
    String ch = channel;
    if (ch == null) {
      ch = channelOf(c.getSchema(), table);
      channel = ch;
    }
    return ch;
  }

  /** Asks the other replicas to poll now; coalesced with requests of the next few ms. */
  void requestNotify() {
    requestsSinceFlush.incrementAndGet();
    if (flushScheduled.compareAndSet(false, true)) {
      // the first request after a quiet window goes out at once; the ones that follow within the
      // window share one notification at its end
      long delay = Math.max(0, lastSentNanos + COALESCE.toNanos() - ticker.nanos());
      try {
        sender.schedule(this::flush, delay, TimeUnit.NANOSECONDS);
      } catch (RuntimeException closed) {
        flushScheduled.set(false);
      }
    }
  }

  private void flush() {
    lastSentNanos = ticker.nanos();
    flushScheduled.set(false);
    int covered = requestsSinceFlush.getAndSet(0);
    if (covered == 0) {
      return;
    }
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
      ps.setString(1, channel(c));
      ps.setString(2, replicaId);
      ps.execute();
      try {
        listener.wakeUpSent(covered);
      } catch (RuntimeException e) {
        log.warn("event=listener_failed error={}", e.toString());
      }
    } catch (SQLException | RuntimeException e) {
      // the others poll anyway; a lost wake-up costs at most one poll interval
      log.debug("event=notify_failed table={} error={}", table, e.toString());
    }
  }

  /** Starts listening; {@code wake} runs on the listener thread for each round of notifications. */
  void listen(Runnable wake) {
    running = true;
    Thread t = new Thread(() -> listenLoop(wake), "lm-listener-" + replicaId);
    t.setDaemon(true);
    listenerThread = t;
    t.start();
  }

  /** The listener loop's health, or null when this replica does not listen. */
  io.localmessage.EngineHealth.Loop health() {
    return listenerThread == null ? null : health.snapshot();
  }

  boolean listenerAlive() {
    Thread t = listenerThread;
    return t == null || t.isAlive();
  }

  private void listenLoop(Runnable wake) {
    long backoff = 100;
    boolean first = true;
    while (running) {
      Connection c = null;
      boolean broken = false;
      // the name the connection was handed out with, restored when it goes back to the pool
      String ownName = null;
      try {
        c = Transactions.autocommit(dataSource);
        listening = c;
        Method get = notificationsMethod(c);
        Object pg = c.unwrap(get.getDeclaringClass());
        if (!get.getDeclaringClass().isInstance(pg)) {
          throw new NotListening(
              "the data source's connections do not unwrap to the PostgreSQL driver's connection");
        }
        String ch = channel(c);
        try (Statement st = c.createStatement()) {
          try (java.sql.ResultSet rs = st.executeQuery("SHOW application_name")) {
            ownName = rs.next() ? rs.getString(1) : null;
          }
          st.execute("SET application_name = '" + applicationName() + "'");
          st.execute("LISTEN " + ch);
        }
        log.info("event=listening channel={} replica={}", ch, replicaId);
        if (!first) {
          wake.run(); // what was notified while the connection was down
        }
        first = false;
        while (running) {
          Object[] notes = (Object[]) get.invoke(pg, LISTEN_WAIT_MS);
          health.success();
          backoff = 100; // reset only once the connection has really worked
          if (notes != null && fromOthers(notes)) {
            wake.run();
          }
        }
      } catch (NotListening e) {
        broken = false;
        // nothing a reconnect can cure: poll as without wake-ups
        log.warn("event=wake_ups_off replica={} reason={}", replicaId, e.getMessage());
        listenerThread = null;
        return;
      } catch (Throwable e) {
        broken = true;
        if (!running) {
          return;
        }
        health.failure(e);
        log.warn(
            "event=listen_connection_lost table={} retry_in_ms={} error={}",
            table,
            backoff,
            Threads.describe(e));
        try {
          TimeUnit.MILLISECONDS.sleep(backoff);
        } catch (InterruptedException ie) {
          return;
        }
        backoff = Math.min(5000, backoff * 2);
      } finally {
        listening = null;
        giveBack(c, broken, ownName);
      }
    }
  }

  /**
   * Returns the listening connection to the pool in the state it was handed out: not listening and
   * with the application name it had ({@code RESET} would give the server's default, empty when the
   * driver set the pool's name after connecting rather than at the start of the session). A broken
   * one is used once through the pool's own wrapper first, so the pool sees the failure and
   * discards it (the waits above talk to the driver directly, past the pool), and never reaches
   * another borrower.
   */
  private void giveBack(Connection c, boolean broken, String ownName) {
    if (c == null) {
      return;
    }
    try (Statement st = c.createStatement()) {
      st.execute("UNLISTEN *");
      if (ownName == null) {
        st.execute("RESET application_name");
      } else {
        try (java.sql.PreparedStatement ps =
            c.prepareStatement("SELECT set_config('application_name', ?, false)")) {
          ps.setString(1, ownName);
          ps.execute();
        }
      }
    } catch (SQLException | RuntimeException e) {
      if (!broken) {
        log.debug("event=listener_reset_failed error={}", e.toString());
      }
      try {
        c.abort(Runnable::run);
      } catch (SQLException | RuntimeException ignored) {
        // already gone
      }
    }
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // already gone
    }
  }

  /** The listening connection cannot be made to work with this data source. */
  private static final class NotListening extends RuntimeException {
    NotListening(String message) {
      super(message);
    }
  }

  /** The application name of the listening session, for operators (and tests) to find it. */
  String applicationName() {
    String name = "localmessage-listener-" + replicaId.replaceAll("[^A-Za-z0-9_.-]", "_");
    return name.length() <= 63 ? name : name.substring(0, 63);
  }

  private boolean fromOthers(Object[] notes) throws ReflectiveOperationException {
    for (Object n : notes) {
      Object parameter = n.getClass().getMethod("getParameter").invoke(n);
      if (!replicaId.equals(parameter)) {
        return true;
      }
    }
    return false;
  }

  private static Method notificationsMethod(Connection c) throws ReflectiveOperationException {
    ClassLoader[] loaders = {
      Thread.currentThread().getContextClassLoader(), WakeUps.class.getClassLoader()
    };
    for (ClassLoader cl : loaders) {
      try {
        Class<?> pg = Class.forName("org.postgresql.PGConnection", false, cl);
        if (c.isWrapperFor(pg)) {
          return pg.getMethod("getNotifications", int.class);
        }
      } catch (ClassNotFoundException | SQLException ignored) {
        // try the next loader
      }
    }
    throw new NotListening(
        "wake-ups need the PostgreSQL JDBC driver's PGConnection; turn them off with"
            + " wakeUps(false) for this data source");
  }

  void close() {
    running = false;
    sender.shutdown();
    Thread t = listenerThread;
    if (t != null) {
      t.interrupt();
      try {
        t.join(TimeUnit.MILLISECONDS.toMillis(LISTEN_WAIT_MS * 2L));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      sender.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }
}
