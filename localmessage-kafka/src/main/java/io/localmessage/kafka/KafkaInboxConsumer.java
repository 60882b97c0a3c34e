package io.localmessage.kafka;

import io.localmessage.LocalMessagesBuilder;
import io.localmessage.inbox.Inbox;
import io.localmessage.kafka.internal.ConsumerMetrics;
import io.localmessage.kafka.internal.DeadLetters;
import io.localmessage.kafka.internal.InboxLoop;
import io.localmessage.kafka.internal.InboxRows;
import io.localmessage.kafka.internal.InboxSchema;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.Dialects;
import io.localmessage.spi.TracePropagation;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes Kafka records and applies each one's effect at most once, through the inbox.
 *
 * <p>A poll thread ({@code lm-inbox-<name>}) fetches records and hands each partition's records to
 * that partition's lane; {@code concurrency} worker threads ({@code lm-inbox-<name>-<n>}) apply the
 * lanes side by side, each lane in offset order, one batch at a time. A batch is one database
 * transaction: up to {@code batchSize} records of one partition, cut short when {@code batchTime}
 * is spent. In it, every record's id is recorded in the inbox (a duplicate, also the same id twice
 * in one batch, skips its handler) and the {@link RecordHandler} of each new record runs on the
 * same connection; then the transaction commits. Kafka offsets are committed (manually, never
 * automatically) only for records whose transaction committed or that were parked, so a crash
 * anywhere re-delivers and the inbox skips what was applied.
 *
 * <p>The event id is {@code <lm-biz-type>:<lm-event-id>} for records of the {@link KafkaRelay}, the
 * bare {@value RelayHeaders#EVENT_ID} header when there is no biz type, else {@code
 * topic-partition-offset}.
 *
 * <p>A handler that throws rolls its batch's transaction back; the records before it are applied
 * again in a transaction of their own (their handlers run once more, their effects commit once),
 * and the failing record is retried alone with exponential backoff up to {@code maxAttempts}; then
 * it is parked in the dead table ({@code local_inbox_dead}, DDL in {@code
 * db/localmessage/<dialect>/V2__localmessage_inbox_dead.sql}) with its error, and its partition
 * goes on. Only its own partition waits meanwhile. A parked record has no inbox row: a later
 * redelivery is tried again. A database failure outside the handler (no connection, inbox insert,
 * rollback or commit failing) is not the records' fault: the lane tries the same batch again after
 * a backoff, so nothing is parked or skipped because the database was down. A commit whose result
 * is unknown (the connection broke during it) is handled the same way: the batch is applied again
 * and the inbox skips the records if the commit did happen.
 *
 * <p>Polling never waits for the database: a partition whose lane holds two batches is paused until
 * it has drained. On a rebalance the consumer waits (up to half the close timeout) for the batches
 * of the revoked partitions, commits their offsets and applies nothing more of them; records
 * fetched but not applied are never committed past.
 *
 * <p>The dedup window is the inbox row's lifetime: rows older than the retention (default 7 days)
 * are purged by a background thread, after which a very late duplicate would be applied again. The
 * purge covers the whole inbox table, whichever consumers share it.
 *
 * <p>Metrics (Micrometer, optional), tagged {@code consumer} and {@code topic}: {@code
 * localmessage.inbox.consumed}, {@code .applied}, {@code .duplicates}, {@code .failures}, {@code
 * .parked} and the timer {@code localmessage.inbox.latency} from the record's {@value
 * RelayHeaders#CREATED_AT} (the producer's database clock) to the commit here.
 *
 * <p>(Longer than most files: most of it is the builder, whose every setter checks its bounds and
 * whose {@code build()} checks the consumer properties against each other.)
 */
public final class KafkaInboxConsumer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KafkaInboxConsumer.class);

  public static final String DEFAULT_DEAD_TABLE = "local_inbox_dead";

  /** The span of one record's application through the inbox. */
  public static final String INBOX_SPAN = "localmessage.inbox";

  public static final int DEFAULT_MAX_ATTEMPTS = 5;
  public static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofMillis(200);
  public static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(5);
  public static final Duration DEFAULT_POLL_TIMEOUT = Duration.ofMillis(500);
  public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
  public static final Duration DEFAULT_PURGE_INTERVAL = Duration.ofHours(1);
  public static final int DEFAULT_BATCH_SIZE = 500;
  public static final Duration DEFAULT_BATCH_TIME = Duration.ofMillis(200);
  public static final int DEFAULT_CONCURRENCY = 4;
  static final int DEFAULT_MAX_POLL_INTERVAL_MS = 300_000;

  private final String name;
  private final Inbox inbox;
  private final Duration retention;
  private final Duration purgeInterval;
  private final Duration closeTimeout;
  private final InboxLoop loop;
  private final Thread thread;
  private ScheduledExecutorService purger;
  private boolean started;
  private boolean closed;

  private KafkaInboxConsumer(Builder b, Dialect dialect, Map<String, Object> props) {
    this.name = b.name;
    this.inbox = Inbox.create(b.dataSource, b.inboxTable, dialect);
    this.retention = b.retention;
    this.purgeInterval = b.purgeInterval;
    this.closeTimeout = b.closeTimeout;
    InboxLoop.Config cfg =
        new InboxLoop.Config(
            b.name,
            List.copyOf(b.topics),
            b.handler,
            b.dataSource,
            inbox,
            new InboxRows(inbox, dialect, b.inboxTable, b.name),
            new DeadLetters(dialect, b.deadTable),
            ConsumerMetrics.of(b.meterRegistry, b.name),
            b.maxAttempts,
            b.backoffInitial,
            b.backoffMax,
            b.batchSize,
            b.batchTime,
            b.concurrency,
            b.pollTimeout,
            Duration.ofSeconds(10),
            b.closeTimeout,
            b.tracing);
    this.loop = new InboxLoop(cfg, new KafkaConsumer<>(props));
    this.thread = new Thread(loop, "lm-inbox-" + b.name);
    this.thread.setDaemon(true);
  }

  /** A builder for the consumer {@code name}: the inbox's consumer column and default group id. */
  public static Builder builder(DataSource dataSource, String name) {
    return new Builder(dataSource, name);
  }

  /** Starts the consumer thread and the inbox purge. */
  public synchronized KafkaInboxConsumer start() {
    if (closed) {
      throw new IllegalStateException("consumer '" + name + "' is closed");
    }
    if (started) {
      return this;
    }
    started = true;
    thread.start();
    if (!purgeInterval.isZero()) {
      purger =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "lm-inbox-purge-" + name);
                t.setDaemon(true);
                return t;
              });
      purger.scheduleWithFixedDelay(
          this::purgeQuietly, 0, purgeInterval.toMillis(), TimeUnit.MILLISECONDS);
    }
    return this;
  }

  /** Deletes inbox rows older than the retention now; returns how many. */
  public int purgeInbox() {
    int n = inbox.purge(retention);
    log.info("event=inbox_purged consumer={} older_than={} deleted={}", name, retention, n);
    return n;
  }

  private void purgeQuietly() {
    try {
      purgeInbox();
    } catch (RuntimeException e) {
      log.warn("event=inbox_purge_failed consumer={} error={}", name, e.toString());
    }
  }

  /**
   * The partitions this consumer owns right now (empty before the first assignment and after
   * close).
   */
  public Set<TopicPartition> assignment() {
    return loop.assignment();
  }

  /** Whether the consumer thread is alive. */
  public boolean isRunning() {
    return thread.isAlive();
  }

  public String name() {
    return name;
  }

  /**
   * Stops polling, lets the batches in hand finish (up to half the close timeout; handlers still
   * running then are interrupted and their transactions roll back), commits the offsets of what is
   * done and closes the Kafka consumer. Records not applied are left uncommitted for the next owner
   * of their partition.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      if (!started) {
        loop.closeUnstarted();
        return;
      }
    }
    loop.stop();
    if (purger != null) {
      purger.shutdownNow();
    }
    if (thread.isAlive()) {
      try {
        thread.join(closeTimeout.toMillis());
        if (thread.isAlive()) {
          log.warn(
              "event=inbox_close_timeout consumer={} waited={}: interrupting the handler",
              name,
              closeTimeout);
          thread.interrupt();
          thread.join(5_000);
        }
        if (purger != null) {
          purger.awaitTermination(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Builds a {@link KafkaInboxConsumer}; every setter checks its bounds at once. */
  public static final class Builder {
    private final DataSource dataSource;
    private final String name;
    private final Map<String, Object> properties = new HashMap<>();
    private List<String> topics;
    private RecordHandler handler;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private int batchSize = DEFAULT_BATCH_SIZE;
    private Duration batchTime = DEFAULT_BATCH_TIME;
    private int concurrency = DEFAULT_CONCURRENCY;
    private Duration backoffInitial = DEFAULT_BACKOFF_INITIAL;
    private Duration backoffMax = DEFAULT_BACKOFF_MAX;
    private Duration pollTimeout = DEFAULT_POLL_TIMEOUT;
    private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
    private Duration retention = DEFAULT_RETENTION;
    private Duration purgeInterval = DEFAULT_PURGE_INTERVAL;
    private String inboxTable = LocalMessagesBuilder.DEFAULT_INBOX_TABLE;
    private String deadTable = DEFAULT_DEAD_TABLE;
    private boolean createTables;
    private Dialect dialect;
    private Object meterRegistry;
    private TracePropagation tracing = TracePropagation.NONE;

    private Builder(DataSource dataSource, String name) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      if (name == null || name.isBlank() || name.length() > Inbox.MAX_CONSUMER_LENGTH) {
        throw new IllegalArgumentException(
            "consumer name must be 1 to "
                + Inbox.MAX_CONSUMER_LENGTH
                + " characters, was '"
                + name
                + "'");
      }
      this.name = name;
    }

    /**
     * Kafka consumer properties: at least {@code bootstrap.servers}. Defaults: {@code group.id} =
     * the consumer name, {@code auto.offset.reset=earliest} (a new group does not skip what was
     * published before it joined), byte array deserializers. {@code enable.auto.commit=true} is
     * refused: offsets are committed after the database.
     */
    public Builder consumerProperties(Map<String, ?> properties) {
      Objects.requireNonNull(properties, "properties")
          .forEach(
              (k, v) -> {
                if (k == null || v == null) {
                  throw new IllegalArgumentException(
                      "consumer properties must not hold null keys or values (key " + k + ")");
                }
                this.properties.put(k, v);
              });
      return this;
    }

    /** The topics to consume; required. */
    public Builder topics(String... topics) {
      return topics(List.of(topics));
    }

    /** The topics to consume, non-empty names; required. */
    public Builder topics(List<String> topics) {
      Objects.requireNonNull(topics, "topics");
      if (topics.isEmpty() || topics.stream().anyMatch(t -> t == null || t.isBlank())) {
        throw new IllegalArgumentException("topics must be non-empty names, were " + topics);
      }
      this.topics = List.copyOf(topics);
      return this;
    }

    /**
     * What to do with each new record, in the transaction that also writes its inbox row; required.
     */
    public Builder handler(RecordHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /** Handler tries per record before it is parked: 1 to 100 (default 5). */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1 || maxAttempts > 100) {
        throw new IllegalArgumentException(
            "maxAttempts must be between 1 and 100, was " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Records applied in one database transaction at most: 1 to 10,000 (default {@value
     * #DEFAULT_BATCH_SIZE}). A batch holds records of one partition, in offset order; their inbox
     * rows and effects commit together, and their offsets are committed to Kafka after that. A
     * batch takes what has arrived, it never waits to fill up. {@code 1} gives one transaction per
     * record.
     */
    public Builder batchSize(int batchSize) {
      if (batchSize < 1 || batchSize > 10_000) {
        throw new IllegalArgumentException(
            "batchSize must be between 1 and 10000, was " + batchSize);
      }
      this.batchSize = batchSize;
      return this;
    }

    /**
     * How long one batch may keep applying records before it commits what it has: 1 ms to 1 min
     * (default 200 ms). Bounds how long a transaction holds its locks, and how long the first
     * records of a large batch wait for their commit. Checked every 100 records.
     */
    public Builder batchTime(Duration batchTime) {
      this.batchTime = check("batchTime", batchTime, Duration.ofMillis(1), Duration.ofMinutes(1));
      return this;
    }

    /**
     * How many partitions are applied at the same time, each by one worker thread ({@code
     * lm-inbox-<name>-<n>}) on one pooled connection: 1 to 256 (default {@value
     * #DEFAULT_CONCURRENCY}). Records of one partition are always applied one batch after the
     * other, in offset order; a record being retried holds only its own partition. Give the data
     * source at least this many connections (plus one for the inbox purge).
     */
    public Builder concurrency(int concurrency) {
      if (concurrency < 1 || concurrency > 256) {
        throw new IllegalArgumentException(
            "concurrency must be between 1 and 256, was " + concurrency);
      }
      this.concurrency = concurrency;
      return this;
    }

    /**
     * Backoff between handler tries (and after database failures): doubling from {@code initial} up
     * to {@code max}; 1 ms to 1 min each (default 200 ms to 5 s).
     */
    public Builder backoff(Duration initial, Duration max) {
      check("backoff initial", initial, Duration.ofMillis(1), Duration.ofMinutes(1));
      check("backoff max", max, Duration.ofMillis(1), Duration.ofMinutes(1));
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "backoff max " + max + " is shorter than backoff initial " + initial);
      }
      this.backoffInitial = initial;
      this.backoffMax = max;
      return this;
    }

    /** How long one poll waits for records: 10 ms to 30 s (default 500 ms). */
    public Builder pollTimeout(Duration pollTimeout) {
      this.pollTimeout =
          check("pollTimeout", pollTimeout, Duration.ofMillis(10), Duration.ofSeconds(30));
      return this;
    }

    /** The bound of {@link #close()}: 1 s to 10 min (default 30 s). */
    public Builder closeTimeout(Duration closeTimeout) {
      this.closeTimeout =
          check("closeTimeout", closeTimeout, Duration.ofSeconds(1), Duration.ofMinutes(10));
      return this;
    }

    /**
     * How long inbox rows are kept, i.e. the window in which duplicates are caught: 1 s to 365 days
     * (default 7 days). Keep it longer than any redelivery can lag (relay retries, consumer group
     * resets).
     */
    public Builder retention(Duration retention) {
      this.retention = check("retention", retention, Duration.ofSeconds(1), Duration.ofDays(365));
      return this;
    }

    /** How often the purge runs: 1 s to 1 day, or {@code ZERO} for never (default 1 h). */
    public Builder purgeInterval(Duration purgeInterval) {
      Objects.requireNonNull(purgeInterval, "purgeInterval");
      this.purgeInterval =
          purgeInterval.isZero()
              ? purgeInterval
              : check("purgeInterval", purgeInterval, Duration.ofSeconds(1), Duration.ofDays(1));
      return this;
    }

    /** The inbox table (default {@code local_inbox}). */
    public Builder inboxTable(String inboxTable) {
      this.inboxTable = LocalMessagesBuilder.checkTableName("inboxTable", inboxTable);
      return this;
    }

    /** The dead table (default {@value #DEFAULT_DEAD_TABLE}). */
    public Builder deadTable(String deadTable) {
      try {
        this.deadTable = LocalMessagesBuilder.checkTableName("deadTable", deadTable);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(e.getMessage().replace("inboxTable", "deadTable"), e);
      }
      return this;
    }

    /** Creates the inbox and dead tables at {@link #build()} when missing (default: off). */
    public Builder createTables(boolean createTables) {
      this.createTables = createTables;
      return this;
    }

    /** Overrides the dialect detected from the data source. */
    public Builder dialect(Dialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /** A Micrometer {@code MeterRegistry}; typed as Object so Micrometer stays optional. */
    public Builder meterRegistry(Object meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    /**
     * Continues each record's trace (default {@link TracePropagation#NONE}). With tracing, every
     * record of a batch gets a {@value #INBOX_SPAN} span, a child of the context in its headers
     * (the relay's {@code localmessage.relay} span), current while its handler runs, so what the
     * handler saves or calls joins the trace. Tags {@code consumer}, {@code topic}; outcome {@code
     * applied} (its transaction committed), {@code duplicate} (the inbox had it), {@code failed}
     * (its handler threw) or {@code rolled_back} (a neighbour failed, or the database did: it is
     * applied again). Give it the same propagation as the producing side's engine, or any
     * propagation that reads W3C {@code traceparent}.
     */
    public Builder tracing(TracePropagation tracing) {
      this.tracing = TracePropagation.failSafe(Objects.requireNonNull(tracing, "tracing"));
      return this;
    }

    /**
     * The consumer, not started yet.
     *
     * @throws IllegalArgumentException when the topics, the handler or the consumer properties are
     *     missing or do not fit together
     */
    public KafkaInboxConsumer build() {
      if (topics == null) {
        throw new IllegalArgumentException("topics(...) is required");
      }
      if (handler == null) {
        throw new IllegalArgumentException("handler(...) is required");
      }
      if (inboxTable.equalsIgnoreCase(deadTable)) {
        throw new IllegalArgumentException(
            "inboxTable and deadTable must differ, both are " + inboxTable);
      }
      Map<String, Object> props = consumerProps();
      Dialect d = dialect != null ? dialect : Dialects.detect(dataSource);
      if (createTables) {
        InboxSchema.create(dataSource, d, inboxTable, deadTable);
      }
      return new KafkaInboxConsumer(this, d, props);
    }

    private Map<String, Object> consumerProps() {
      Map<String, Object> p = new HashMap<>(properties);
      if (p.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG) == null) {
        throw new IllegalArgumentException(
            "consumer properties need " + ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG);
      }
      Object auto = p.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
      if (auto != null && !auto.toString().trim().equalsIgnoreCase("false")) {
        throw new IllegalArgumentException(
            "enable.auto.commit="
                + auto
                + " is refused: offsets are committed only after the records' database"
                + " transactions, never ahead of them");
      }
      p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      for (String key :
          List.of(
              ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
              ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG)) {
        Object v = p.get(key);
        String cls = v instanceof Class<?> c ? c.getName() : v == null ? null : v.toString();
        if (cls != null && !cls.equals(ByteArrayDeserializer.class.getName())) {
          throw new IllegalArgumentException(
              key + " must be ByteArrayDeserializer (the handler gets the bytes), was " + cls);
        }
        p.put(key, ByteArrayDeserializer.class.getName());
      }
      p.putIfAbsent(ConsumerConfig.GROUP_ID_CONFIG, name);
      p.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      p.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "lm-inbox-" + name);
      Object mpi =
          p.getOrDefault(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, DEFAULT_MAX_POLL_INTERVAL_MS);
      try {
        long v = Long.parseLong(mpi.toString().trim());
        if (v < 1_000) {
          throw new IllegalArgumentException(
              "max.poll.interval.ms must be at least 1000, was " + v);
        }
        p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, Long.toString(v));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("max.poll.interval.ms must be a number, was " + mpi, e);
      }
      String reset = p.get(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG).toString();
      if (reset.toLowerCase(Locale.ROOT).equals("latest")) {
        log.warn(
            "event=inbox_offset_reset_latest consumer={}: a new group skips what was published"
                + " before it joined",
            name);
      }
      return p;
    }

    private static Duration check(String what, Duration value, Duration min, Duration max) {
      Objects.requireNonNull(value, what);
      if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
        throw new IllegalArgumentException(
            what + " must be between " + min + " and " + max + ", was " + value);
      }
      return value;
    }
  }
}
