package io.localmessage.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code localmessage.*} properties. Engine settings mirror {@link
 * io.localmessage.LocalMessagesBuilder} and take its defaults; {@code localmessage.types} holds
 * per-biz-type settings. A biz type with dots needs brackets in the key: {@code
 * localmessage.types[points.add].max-attempts=5} (YAML: {@code "[points.add]":}).
 *
 * <p>(Longer than most files: Spring binds properties through getters and setters, one pair per
 * setting of the builder and of a type's configuration.)
 */
@ConfigurationProperties(prefix = "localmessage")
public final class LocalMessageProperties {

  /** Whether to auto-configure the engine at all. */
  private boolean enabled = true;

  /**
   * Whether the workers start with the application context. Off: messages are still saved (and
   * handlers registered), but nothing is delivered on this replica.
   */
  private boolean autoStartup = true;

  /** The message table; the control and audit tables take its name plus _control and _audit. */
  private String table = "local_message";

  /** The inbox table. */
  private String inboxTable = "local_inbox";

  /** This replica's id, written as lease_owner (default: host name and pid). */
  private String replicaId;

  /** Handler slots (messages in flight) on this replica, all biz types together (1 to 20000). */
  private int concurrency = 8;

  /**
   * How long a claim holds a message before it is renewed (renewed while the handler runs); longer
   * than twice the write-back margin.
   */
  private Duration lease = Duration.ofSeconds(30);

  /**
   * The longest a running handler's lease is renewed for; must cover every handler timeout plus the
   * write-back margin, and be at least the lease.
   */
  private Duration maxExecutionTime = Duration.ofMinutes(15);

  /** Idle poll interval; a full batch polls again at once. */
  private Duration pollInterval = Duration.ofMillis(500);

  /** Time reserved in the lease for writing the outcome back after a handler finishes. */
  private Duration writeBackMargin = Duration.ofSeconds(5);

  /** How long shutdown waits for in-flight handlers before releasing their leases. */
  private Duration shutdownTimeout = Duration.ofSeconds(30);

  /** How often expired last attempts are swept to DEAD and retained successes purged. */
  private Duration maintenanceInterval = Duration.ofSeconds(10);

  /**
   * How long an engine loop (poller, writer, ...) may go without a successful iteration before the
   * health indicator reports it stuck (DOWN). Loops that run less often get at least three of their
   * intervals.
   */
  private Duration loopStuckAfter = Duration.ofSeconds(30);

  /** The largest payload a save accepts, in bytes. */
  private int maxPayloadBytes = 1048576;

  /** Rows per purge statement. */
  private int purgeBatchSize = 1000;

  /** The most outcomes written back in one statement. */
  private int writeBatchSize = 500;

  /**
   * The attempt cap of messages saved for biz types that have no handler on this replica. Unset
   * (the default): such a message takes the cap of the replica that handles it, at its first claim.
   */
  private Integer defaultMaxAttempts;

  /** Cross-replica wake-ups through LISTEN/NOTIFY (PostgreSQL; one more pool connection). */
  private boolean wakeUps = true;

  /**
   * Run blocking handlers on virtual threads, one per message in flight (Java 21 or later; startup
   * fails naming the JVM on an older one). Off by default: on Java 21 to 23 a virtual thread that
   * blocks inside {@code synchronized} pins its carrier thread.
   */
  private boolean virtualThreads;

  /**
   * Biz types this service saves but does not handle that are not ordered: their saves skip the
   * aggregate lock that a type unknown here takes as if it were ordered.
   */
  private java.util.List<String> unorderedTypes = new java.util.ArrayList<>();

  public java.util.List<String> getUnorderedTypes() {
    return unorderedTypes;
  }

  public void setUnorderedTypes(java.util.List<String> unorderedTypes) {
    this.unorderedTypes = unorderedTypes;
  }

  public boolean isVirtualThreads() {
    return virtualThreads;
  }

  public void setVirtualThreads(boolean virtualThreads) {
    this.virtualThreads = virtualThreads;
  }

  public boolean isWakeUps() {
    return wakeUps;
  }

  public void setWakeUps(boolean wakeUps) {
    this.wakeUps = wakeUps;
  }

  private final Schema schema = new Schema();

  private final Tracing tracing = new Tracing();

  public Tracing getTracing() {
    return tracing;
  }

  /** Traces through the outbox, on the application's Micrometer {@code ObservationRegistry}. */
  public static final class Tracing {
    /**
     * Whether saves write the current trace context into the message's headers and handlers run as
     * children of it (when the application has an ObservationRegistry).
     */
    private boolean enabled = true;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }
  }

  private final Health health = new Health();

  /** Per-biz-type settings, keyed by biz type. */
  private Map<String, Type> types = new LinkedHashMap<>();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public boolean isAutoStartup() {
    return autoStartup;
  }

  public void setAutoStartup(boolean autoStartup) {
    this.autoStartup = autoStartup;
  }

  public String getTable() {
    return table;
  }

  public void setTable(String table) {
    this.table = table;
  }

  public String getInboxTable() {
    return inboxTable;
  }

  public void setInboxTable(String inboxTable) {
    this.inboxTable = inboxTable;
  }

  public String getReplicaId() {
    return replicaId;
  }

  public void setReplicaId(String replicaId) {
    this.replicaId = replicaId;
  }

  public int getConcurrency() {
    return concurrency;
  }

  public void setConcurrency(int concurrency) {
    this.concurrency = concurrency;
  }

  public Duration getLease() {
    return lease;
  }

  public void setLease(Duration lease) {
    this.lease = lease;
  }

  public Duration getMaxExecutionTime() {
    return maxExecutionTime;
  }

  public void setMaxExecutionTime(Duration maxExecutionTime) {
    this.maxExecutionTime = maxExecutionTime;
  }

  public Duration getPollInterval() {
    return pollInterval;
  }

  public void setPollInterval(Duration pollInterval) {
    this.pollInterval = pollInterval;
  }

  public Duration getWriteBackMargin() {
    return writeBackMargin;
  }

  public void setWriteBackMargin(Duration writeBackMargin) {
    this.writeBackMargin = writeBackMargin;
  }

  public Duration getShutdownTimeout() {
    return shutdownTimeout;
  }

  public void setShutdownTimeout(Duration shutdownTimeout) {
    this.shutdownTimeout = shutdownTimeout;
  }

  public Duration getMaintenanceInterval() {
    return maintenanceInterval;
  }

  public void setMaintenanceInterval(Duration maintenanceInterval) {
    this.maintenanceInterval = maintenanceInterval;
  }

  public Duration getLoopStuckAfter() {
    return loopStuckAfter;
  }

  public void setLoopStuckAfter(Duration loopStuckAfter) {
    this.loopStuckAfter = loopStuckAfter;
  }

  public int getMaxPayloadBytes() {
    return maxPayloadBytes;
  }

  public void setMaxPayloadBytes(int maxPayloadBytes) {
    this.maxPayloadBytes = maxPayloadBytes;
  }

  public int getPurgeBatchSize() {
    return purgeBatchSize;
  }

  public void setPurgeBatchSize(int purgeBatchSize) {
    this.purgeBatchSize = purgeBatchSize;
  }

  public int getWriteBatchSize() {
    return writeBatchSize;
  }

  public void setWriteBatchSize(int writeBatchSize) {
    this.writeBatchSize = writeBatchSize;
  }

  public Integer getDefaultMaxAttempts() {
    return defaultMaxAttempts;
  }

  public void setDefaultMaxAttempts(Integer defaultMaxAttempts) {
    this.defaultMaxAttempts = defaultMaxAttempts;
  }

  public Schema getSchema() {
    return schema;
  }

  public Health getHealth() {
    return health;
  }

  public Map<String, Type> getTypes() {
    return types;
  }

  public void setTypes(Map<String, Type> types) {
    this.types = types;
  }

  /** How the engine's tables come to exist. */
  public static final class Schema {
    /**
     * Whether the engine creates its tables at startup when they are missing (CREATE TABLE IF NOT
     * EXISTS, with the configured table names). Leave off when Flyway (the starter's own run, or
     * yours) or Liquibase creates them.
     */
    private boolean initialize;

    /**
     * Whether the startup fails when the engine's tables do not exist (with the ways to create
     * them), rather than starting and failing every poll.
     */
    private boolean verify = true;

    private final SchemaFlyway flyway = new SchemaFlyway();

    public boolean isInitialize() {
      return initialize;
    }

    public void setInitialize(boolean initialize) {
      this.initialize = initialize;
    }

    public boolean isVerify() {
      return verify;
    }

    public void setVerify(boolean verify) {
      this.verify = verify;
    }

    public SchemaFlyway getFlyway() {
      return flyway;
    }
  }

  /**
   * The library's own Flyway run: its scripts from classpath:db/localmessage/&lt;dialect&gt;, with
   * a schema history table of their own, so they never take the application's version numbers.
   */
  public static final class SchemaFlyway {
    /**
     * Whether the starter migrates the library's tables with Flyway at startup. Unset: yes when
     * Flyway is on the classpath, unless localmessage.schema.initialize=true, the application's
     * spring.flyway.locations already include db/localmessage, or the table names are not the
     * defaults.
     */
    private Boolean enabled;

    /** The schema history table of the library's migrations. */
    private String table = "localmessage_schema_history";

    public Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(Boolean enabled) {
      this.enabled = enabled;
    }

    public String getTable() {
      return table;
    }

    public void setTable(String table) {
      this.table = table;
    }
  }

  /** Thresholds of the localmessage health indicator; unset thresholds are not checked. */
  public static final class Health {
    /** Age of the oldest PENDING message (any biz type) above which health reports the status. */
    private Duration maxOldestPendingAge;

    /** Number of DEAD messages (all biz types) above which health reports the status. */
    private Long maxDead;

    /**
     * The status reported when a threshold is exceeded: OUT_OF_SERVICE, DOWN, or a custom code such
     * as WARN (then add it to management.endpoint.health.status.order).
     */
    private String thresholdStatus = "OUT_OF_SERVICE";

    public Duration getMaxOldestPendingAge() {
      return maxOldestPendingAge;
    }

    public void setMaxOldestPendingAge(Duration maxOldestPendingAge) {
      this.maxOldestPendingAge = maxOldestPendingAge;
    }

    public Long getMaxDead() {
      return maxDead;
    }

    public void setMaxDead(Long maxDead) {
      this.maxDead = maxDead;
    }

    public String getThresholdStatus() {
      return thresholdStatus;
    }

    public void setThresholdStatus(String thresholdStatus) {
      this.thresholdStatus = thresholdStatus;
    }
  }

  /** Settings of one biz type; unset values take the {@link io.localmessage.HandlerConfig} ones. */
  public static final class Type {
    /** Deliveries before a message goes DEAD (1 to 1000; default 10). */
    private Integer maxAttempts;

    /** Messages of this type in flight at once on one replica (default: up to the engine total). */
    private Integer concurrency;

    /** Handler timeout; the handler is interrupted past it (default 30s). */
    private Duration timeout;

    /** Whether messages of one aggregate run strictly one after another, in id order. */
    private Boolean ordered;

    /** How long a SUCCEEDED message is kept (default 0: deleted at once). */
    private Duration retainSucceeded;

    /** Retries stop once a message is this old (default: no limit). */
    private Duration maxAge;

    /** Messages per call of a batch handler (default 100). */
    private Integer batchSize;

    /** Whether a RetryAfter outcome uses up an attempt (default false). */
    private Boolean retryAfterCountsAttempt;

    private final Backoff backoff = new Backoff();

    public Integer getMaxAttempts() {
      return maxAttempts;
    }

    public void setMaxAttempts(Integer maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    public Integer getConcurrency() {
      return concurrency;
    }

    public void setConcurrency(Integer concurrency) {
      this.concurrency = concurrency;
    }

    public Duration getTimeout() {
      return timeout;
    }

    public void setTimeout(Duration timeout) {
      this.timeout = timeout;
    }

    public Boolean getOrdered() {
      return ordered;
    }

    public void setOrdered(Boolean ordered) {
      this.ordered = ordered;
    }

    public Duration getRetainSucceeded() {
      return retainSucceeded;
    }

    public void setRetainSucceeded(Duration retainSucceeded) {
      this.retainSucceeded = retainSucceeded;
    }

    public Duration getMaxAge() {
      return maxAge;
    }

    public void setMaxAge(Duration maxAge) {
      this.maxAge = maxAge;
    }

    public Integer getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(Integer batchSize) {
      this.batchSize = batchSize;
    }

    public Boolean getRetryAfterCountsAttempt() {
      return retryAfterCountsAttempt;
    }

    public void setRetryAfterCountsAttempt(Boolean retryAfterCountsAttempt) {
      this.retryAfterCountsAttempt = retryAfterCountsAttempt;
    }

    public Backoff getBackoff() {
      return backoff;
    }
  }

  /**
   * Backoff after a failed attempt: exponential (initial, max, multiplier, jitter), fixed, or an
   * explicit schedule; set at most one of the three kinds. Default: exponential 1s..1h, jitter 0.5.
   */
  public static final class Backoff {
    /** Exponential: the delay after the first failure. */
    private Duration initial;

    /** Exponential: the longest delay. */
    private Duration max;

    /** Exponential: growth factor per failure (default 2). */
    private Double multiplier;

    /** Exponential: share of the delay that is randomised, 0 to 1 (default 0.5). */
    private Double jitter;

    /** Fixed: the same delay after every failure. */
    private Duration fixed;

    /** Schedule: the n-th failure waits the n-th delay; failures past the end repeat the last. */
    private List<Duration> schedule = new ArrayList<>();

    public Duration getInitial() {
      return initial;
    }

    public void setInitial(Duration initial) {
      this.initial = initial;
    }

    public Duration getMax() {
      return max;
    }

    public void setMax(Duration max) {
      this.max = max;
    }

    public Double getMultiplier() {
      return multiplier;
    }

    public void setMultiplier(Double multiplier) {
      this.multiplier = multiplier;
    }

    public Double getJitter() {
      return jitter;
    }

    public void setJitter(Double jitter) {
      this.jitter = jitter;
    }

    public Duration getFixed() {
      return fixed;
    }

    public void setFixed(Duration fixed) {
      this.fixed = fixed;
    }

    public List<Duration> getSchedule() {
      return schedule;
    }

    public void setSchedule(List<Duration> schedule) {
      this.schedule = schedule;
    }
  }
}
