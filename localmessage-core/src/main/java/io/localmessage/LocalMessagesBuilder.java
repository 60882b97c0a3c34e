package io.localmessage;

import io.localmessage.internal.engine.Engines;
import io.localmessage.internal.engine.Settings;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.EngineListener;
import io.localmessage.spi.ErrorRedactor;
import io.localmessage.spi.TracePropagation;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Builds a {@link LocalMessages}. Every setter checks its bounds at once and says what is allowed;
 * {@link #build()} checks the settings against each other.
 */
public final class LocalMessagesBuilder {
  /** The message table, unless configured. */
  public static final String DEFAULT_TABLE = "local_message";

  /** The inbox table, unless configured. */
  public static final String DEFAULT_INBOX_TABLE = "local_inbox";

  /** Handler slots of a replica, unless configured. */
  public static final int DEFAULT_CONCURRENCY = 8;

  /** The most messages one replica can have in flight ({@link #concurrency(int)}). */
  public static final int MAX_CONCURRENCY = 20_000;

  /** How long a claim holds a message, unless configured. */
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

  /** The idle poll interval, unless configured. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(500);

  /** The time kept at the end of a lease for the write-back, unless configured. */
  public static final Duration DEFAULT_WRITE_BACK_MARGIN = Duration.ofSeconds(5);

  /** How long {@code close()} waits for handlers, unless configured. */
  public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

  /** How often the sweep and the retention purge run, unless configured. */
  public static final Duration DEFAULT_MAINTENANCE_INTERVAL = Duration.ofSeconds(10);

  /** The largest payload accepted, unless configured. */
  public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

  /** Rows per purge statement, unless configured. */
  public static final int DEFAULT_PURGE_BATCH_SIZE = 1000;

  /** Outcomes per write-back statement at most, unless configured. */
  public static final int DEFAULT_WRITE_BATCH_SIZE = 500;

  /** How long a running handler's lease is renewed at most, unless configured. */
  public static final Duration DEFAULT_MAX_EXECUTION_TIME = Duration.ofMinutes(15);

  /** How long a loop may go without success before it is reported stuck, unless configured. */
  public static final Duration DEFAULT_LOOP_STUCK_AFTER = Duration.ofSeconds(30);

  /** A plain SQL identifier, optionally schema-qualified; short enough for the derived names. */
  private static final Pattern TABLE_NAME =
      Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,39}");

  private final DataSource dataSource;
  private String table = DEFAULT_TABLE;
  private String inboxTable = DEFAULT_INBOX_TABLE;
  private String replicaId;
  private int concurrency = DEFAULT_CONCURRENCY;
  private Duration lease = DEFAULT_LEASE;
  private Duration pollInterval = DEFAULT_POLL_INTERVAL;
  private Duration writeBackMargin = DEFAULT_WRITE_BACK_MARGIN;
  private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
  private Duration maintenanceInterval = DEFAULT_MAINTENANCE_INTERVAL;
  private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
  private int purgeBatchSize = DEFAULT_PURGE_BATCH_SIZE;
  private int writeBatchSize = DEFAULT_WRITE_BATCH_SIZE;
  private int defaultMaxAttempts = HandlerConfig.DEFAULT_MAX_ATTEMPTS;
  private boolean defaultMaxAttemptsSet;
  private Duration maxExecutionTime = DEFAULT_MAX_EXECUTION_TIME;
  private Duration loopStuckAfter = DEFAULT_LOOP_STUCK_AFTER;
  private boolean wakeUps = true;
  private boolean virtualThreads;
  private java.util.Set<String> unorderedTypes = java.util.Set.of();
  private io.localmessage.internal.engine.Ticker ticker =
      io.localmessage.internal.engine.Ticker.SYSTEM;
  private Dialect dialect;
  private boolean autoCreateSchema;
  private final java.util.List<EngineListener> listeners = new java.util.ArrayList<>();
  private ErrorRedactor redactor = ErrorRedactor.NONE;
  private Object meterRegistry;
  private TracePropagation tracing = TracePropagation.NONE;

  LocalMessagesBuilder(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  /**
   * The message table (default {@value #DEFAULT_TABLE}); the control and audit tables take its name
   * plus {@code _control} and {@code _audit}. A plain identifier, optionally {@code schema.table}.
   */
  public LocalMessagesBuilder table(String table) {
    this.table = checkTableName("table", table);
    return this;
  }

  /** The inbox table (default {@value #DEFAULT_INBOX_TABLE}). */
  public LocalMessagesBuilder inboxTable(String inboxTable) {
    this.inboxTable = checkTableName("inboxTable", inboxTable);
    return this;
  }

  /** This replica's id, written as {@code lease_owner} (default: host name and pid). */
  public LocalMessagesBuilder replicaId(String replicaId) {
    NewMessage.checkText("replicaId", replicaId, 64);
    this.replicaId = replicaId;
    return this;
  }

  /**
   * Handler slots on this replica, all types together: 1 to {@value #MAX_CONCURRENCY} (default
   * {@value #DEFAULT_CONCURRENCY}). A slot is a message in flight. A blocking {@link Handler} holds
   * a worker thread for its slot: on platform threads (the default) keep this near what the machine
   * can run, a few hundred at most; with {@link #virtualThreads(boolean)} or {@link AsyncHandler}s
   * thousands of messages can wait at once on a few platform threads.
   */
  public LocalMessagesBuilder concurrency(int concurrency) {
    if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
      throw new IllegalArgumentException(
          "concurrency must be between 1 and " + MAX_CONCURRENCY + ", was " + concurrency);
    }
    this.concurrency = concurrency;
    return this;
  }

  /**
   * How long a claim holds a message before another replica may take it over: 100 ms to 24 h
   * (default 30 s). While a handler runs, its lease is renewed once a third of it has passed, so
   * the lease need not cover the handler's timeout: it bounds how long a crashed replica's messages
   * wait. It must be longer than twice the write-back margin, which {@link #build()} checks.
   */
  public LocalMessagesBuilder lease(Duration lease) {
    this.lease = checkRange("lease", lease, Duration.ofMillis(100), Duration.ofHours(24));
    return this;
  }

  /** Idle poll interval: 10 ms to 1 h. After a full claim the poller claims again at once. */
  public LocalMessagesBuilder pollInterval(Duration pollInterval) {
    this.pollInterval =
        checkRange("pollInterval", pollInterval, Duration.ofMillis(10), Duration.ofHours(1));
    return this;
  }

  /** Time reserved in the lease for writing the outcome back after a handler finishes. */
  public LocalMessagesBuilder writeBackMargin(Duration margin) {
    this.writeBackMargin =
        checkRange("writeBackMargin", margin, Duration.ofMillis(50), Duration.ofMinutes(10));
    return this;
  }

  /** How long {@link LocalMessages#close()} waits for in-flight handlers: 0 to 10 min. */
  public LocalMessagesBuilder shutdownTimeout(Duration timeout) {
    this.shutdownTimeout =
        checkRange("shutdownTimeout", timeout, Duration.ZERO, Duration.ofMinutes(10));
    return this;
  }

  /** How often expired last attempts are swept to DEAD and retained successes purged. */
  public LocalMessagesBuilder maintenanceInterval(Duration interval) {
    this.maintenanceInterval =
        checkRange("maintenanceInterval", interval, Duration.ofMillis(10), Duration.ofHours(1));
    return this;
  }

  /** The largest payload {@code save} accepts: 1 byte to 64 MiB (default 1 MiB). */
  public LocalMessagesBuilder maxPayloadBytes(int max) {
    if (max < 1 || max > 64 * 1024 * 1024) {
      throw new IllegalArgumentException(
          "maxPayloadBytes must be between 1 and 67108864, was " + max);
    }
    this.maxPayloadBytes = max;
    return this;
  }

  /** Rows per purge statement: 1 to 100,000. */
  public LocalMessagesBuilder purgeBatchSize(int size) {
    if (size < 1 || size > 100_000) {
      throw new IllegalArgumentException(
          "purgeBatchSize must be between 1 and 100000, was " + size);
    }
    this.purgeBatchSize = size;
    return this;
  }

  /** The most outcomes written back in one statement: 1 to 5,000. */
  public LocalMessagesBuilder writeBatchSize(int size) {
    if (size < 1 || size > 5_000) {
      throw new IllegalArgumentException("writeBatchSize must be between 1 and 5000, was " + size);
    }
    this.writeBatchSize = size;
    return this;
  }

  /**
   * The attempt cap of messages saved for types not registered on this replica. Without it (the
   * default), such a message takes the cap of the replica that handles it, at its first claim: a
   * producer service that saves messages its workers handle gets the workers' policy.
   */
  public LocalMessagesBuilder defaultMaxAttempts(int maxAttempts) {
    if (maxAttempts < 1 || maxAttempts > 1000) {
      throw new IllegalArgumentException(
          "defaultMaxAttempts must be between 1 and 1000, was " + maxAttempts);
    }
    this.defaultMaxAttempts = maxAttempts;
    this.defaultMaxAttemptsSet = true;
    return this;
  }

  /**
   * The longest a handler's lease is renewed for: 1 s to 24 h (default 15 min). A handler still
   * running after that (a thread that ignores interrupts and never returns) no longer holds its
   * message: the lease runs out and another replica may run it. Must be at least every registered
   * handler timeout plus the write-back margin.
   */
  public LocalMessagesBuilder maxExecutionTime(Duration max) {
    this.maxExecutionTime =
        checkRange("maxExecutionTime", max, Duration.ofSeconds(1), Duration.ofHours(24));
    return this;
  }

  /**
   * Cross-replica wake-ups (default on; PostgreSQL only, ignored elsewhere): a message committed on
   * a replica that will not run it itself, a requeue or a resume wakes the other replicas at once
   * through {@code LISTEN}/{@code NOTIFY} instead of waiting for their next poll. A started engine
   * with registered handlers keeps one connection of the data source for listening: size the pool
   * one larger. Sending costs the business transaction nothing: it happens after the commit, at
   * most once every few milliseconds per replica.
   */
  public LocalMessagesBuilder wakeUps(boolean enabled) {
    this.wakeUps = enabled;
    return this;
  }

  /**
   * Types this replica saves but does not handle, named as not ordered. A save of an ordered type
   * locks its aggregate first (see {@link HandlerConfig.Builder#ordered(boolean)}), and a type that
   * is not registered on this replica is locked as if it were ordered: the replica that handles it
   * may say it is, and a lock too many costs a wait, one too few breaks the order. Naming the
   * unordered ones here spares their saves that lock, on a replica that only saves (a web tier, a
   * producer) or that handles other types. Registering one of them here as ordered is refused.
   *
   * @throws IllegalArgumentException for a name that is not a valid biz type
   */
  public LocalMessagesBuilder unorderedTypes(String... bizTypes) {
    java.util.Set<String> types = new java.util.TreeSet<>();
    for (String t : Objects.requireNonNull(bizTypes, "bizTypes")) {
      types.add(NewMessage.checkBizType(t));
    }
    this.unorderedTypes = java.util.Set.copyOf(types);
    return this;
  }

  /**
   * Runs blocking handlers on virtual threads, one per message in flight, instead of a pool of
   * platform threads (default off). Needs Java 21 or later: refused on an older JVM. A handler that
   * waits on I/O then holds no platform thread, so {@link #concurrency(int)} can be in the
   * thousands. Caveat: on Java 21 to 23 a virtual thread that blocks inside a {@code synchronized}
   * block (or in native code) pins its carrier thread; some JDBC drivers and client libraries do,
   * and a few pinned threads stall all the others. Java 24 and later no longer pin in {@code
   * synchronized}. Asynchronous handlers ({@link LocalMessages#registerAsync}) need neither.
   */
  public LocalMessagesBuilder virtualThreads(boolean enabled) {
    if (enabled) {
      Engines.checkVirtualThreads();
    }
    this.virtualThreads = enabled;
    return this;
  }

  /**
   * How long a background loop may go without a successful iteration before {@link
   * LocalMessages#health()} reports it stuck: 100 ms to 1 h (default 30 s).
   */
  public LocalMessagesBuilder loopStuckAfter(Duration after) {
    this.loopStuckAfter =
        checkRange("loopStuckAfter", after, Duration.ofMillis(100), Duration.ofHours(1));
    return this;
  }

  /** Overrides the dialect detected from the JDBC metadata. */
  public LocalMessagesBuilder dialect(Dialect dialect) {
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    return this;
  }

  /** Creates the tables at {@link #build()} when they are missing (default: off, use Flyway). */
  public LocalMessagesBuilder autoCreateSchema(boolean autoCreate) {
    this.autoCreateSchema = autoCreate;
    return this;
  }

  /**
   * Adds a listener; every added listener receives every event (the console's chart, an
   * application's tracing and the Micrometer binding can watch the same engine).
   */
  public LocalMessagesBuilder listener(EngineListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  /**
   * Cleans every error summary before it is stored as {@code last_error} or logged (default: keeps
   * it as it is). Use it to strip card numbers, tokens and personal data from exception messages.
   */
  public LocalMessagesBuilder errorRedactor(ErrorRedactor redactor) {
    this.redactor = Objects.requireNonNull(redactor, "redactor");
    return this;
  }

  /**
   * Binds the library's meters (backlog, outcomes, latencies, renewals, conflicts) to a Micrometer
   * {@code MeterRegistry}. Typed as Object so the core needs Micrometer on the classpath only when
   * this is used.
   */
  public LocalMessagesBuilder meterRegistry(Object meterRegistry) {
    this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
    return this;
  }

  /**
   * Carries traces through the outbox (default {@link TracePropagation#NONE}: nothing written,
   * nothing restored). At save, the caller's trace context is written into the message's headers
   * ({@code traceparent}, {@code tracestate}, {@code baggage} when configured) under a {@code
   * localmessage.save} span; each execution of a handler runs in a {@code localmessage.handle} span
   * that is a child of it, on whichever replica and at whichever attempt, and current while the
   * handler runs. For Micrometer Observation: {@code
   * tracing(TracePropagation.observation(observationRegistry))}.
   */
  public LocalMessagesBuilder tracing(TracePropagation tracing) {
    this.tracing = Objects.requireNonNull(tracing, "tracing");
    return this;
  }

  /**
   * The engine. Checks the settings against each other (the lease must be longer than twice the
   * write-back margin, {@code maxExecutionTime} at least the lease) and, with {@link
   * #autoCreateSchema(boolean)}, creates the tables. Register handlers on it, then {@link
   * LocalMessages#start()}.
   *
   * @throws IllegalArgumentException when the settings do not fit together
   * @throws StoreException when the database cannot be reached to detect the dialect or create the
   *     schema
   */
  public LocalMessages build() {
    if (table.equalsIgnoreCase(inboxTable)) {
      throw new IllegalArgumentException("table and inboxTable must differ, both are " + table);
    }
    if (lease.compareTo(writeBackMargin.multipliedBy(2)) <= 0) {
      throw new IllegalArgumentException(
          "lease "
              + lease
              + " must be longer than twice the write-back margin "
              + writeBackMargin
              + ": a lease is renewed once a third of it has passed, and the margin is kept"
              + " at its end for writing the outcome back");
    }
    if (maxExecutionTime.compareTo(lease) < 0) {
      throw new IllegalArgumentException(
          "maxExecutionTime " + maxExecutionTime + " must not be shorter than the lease " + lease);
    }
    Settings settings =
        new Settings(
            dataSource,
            table,
            inboxTable,
            replicaId == null ? defaultReplicaId() : replicaId,
            concurrency,
            lease,
            pollInterval,
            writeBackMargin,
            shutdownTimeout,
            maintenanceInterval,
            maxPayloadBytes,
            purgeBatchSize,
            writeBatchSize,
            defaultMaxAttempts,
            defaultMaxAttemptsSet,
            dialect,
            autoCreateSchema,
            EngineListener.composite(listeners),
            redactor,
            meterRegistry,
            maxExecutionTime,
            loopStuckAfter,
            wakeUps,
            TracePropagation.failSafe(tracing),
            virtualThreads,
            unorderedTypes,
            ticker);
    return Engines.create(settings);
  }

  /**
   * Test seam: the engine's interval clock (default {@code System.nanoTime()}), so a test can run
   * it with readings near either end of {@code long}.
   */
  LocalMessagesBuilder ticker(io.localmessage.internal.engine.Ticker ticker) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    return this;
  }

  /** Validates a table name the way {@link #table(String)} does; returns it. */
  public static String checkTableName(String what, String name) {
    if (name == null || !TABLE_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          what
              + " '"
              + name
              + "' is not a plain SQL identifier: letters, digits and _, at most 40 characters,"
              + " optionally prefixed by a schema name and a dot");
    }
    return name;
  }

  private static Duration checkRange(String what, Duration value, Duration min, Duration max) {
    Objects.requireNonNull(value, what);
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          what + " must be between " + min + " and " + max + ", was " + value);
    }
    return value;
  }

  private static String defaultReplicaId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      host = "unknown-host";
    }
    String id = host + "-" + ProcessHandle.current().pid();
    return id.length() <= 64 ? id : id.substring(id.length() - 64);
  }
}
