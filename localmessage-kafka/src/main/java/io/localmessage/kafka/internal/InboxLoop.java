package io.localmessage.kafka.internal;

import io.localmessage.Outcome;
import io.localmessage.inbox.Inbox;
import io.localmessage.kafka.RecordHandler;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer thread of a {@code KafkaInboxConsumer}: poll, apply each record once through the
 * inbox in its own transaction, commit offsets only for records whose transaction committed (or
 * that were parked). Records not applied are never committed past: when the loop stops early (a
 * database failure, the poll budget, shutdown) it seeks each partition back to its first record not
 * done, and the next poll (or the partition's next owner) starts there. Only this thread touches
 * the Kafka consumer. Not API.
 */
public final class InboxLoop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(InboxLoop.class);

  /** Everything the loop needs; built and checked by the public builder. */
  public record Config(
      String name,
      Collection<String> topics,
      RecordHandler handler,
      DataSource dataSource,
      Inbox inbox,
      DeadLetters deadLetters,
      ConsumerMetrics metrics,
      int maxAttempts,
      Duration backoffInitial,
      Duration backoffMax,
      Duration pollTimeout,
      Duration commitTimeout,
      Duration closeTimeout,
      Duration pollBudget) {}

  private enum Result {
    APPLIED,
    DUPLICATE,
    PARKED,
    /** A database failure outside the handler: stop here, come back to this record. */
    INFRA,
    /** Shutdown during a retry wait: the record stays unapplied and uncommitted. */
    STOPPED,
    /** One handler attempt threw (internal to {@link #apply}). */
    HANDLER_FAILED
  }

  private final Config cfg;
  private final Consumer<byte[], byte[]> consumer;
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
  private volatile boolean running = true;
  private int infraFailures;
  private Connection connection;

  public InboxLoop(Config cfg, Consumer<byte[], byte[]> consumer) {
    this.cfg = cfg;
    this.consumer = consumer;
  }

  /** Asks the loop to stop: it finishes the record in hand, commits what is done, closes. */
  public void stop() {
    running = false;
    stop.countDown();
    consumer.wakeup();
  }

  /** Closes the Kafka consumer of a loop that never ran. */
  public void closeUnstarted() {
    running = false;
    consumer.close(Duration.ZERO);
  }

  @Override
  public void run() {
    try {
      consumer.subscribe(cfg.topics(), new Rebalance());
      log.info("event=inbox_consumer_started consumer={} topics={}", cfg.name(), cfg.topics());
      while (running) {
        try {
          ConsumerRecords<byte[], byte[]> records = consumer.poll(cfg.pollTimeout());
          if (!records.isEmpty()) {
            process(records);
          }
        } catch (WakeupException e) {
          // stop() woke a blocking call up: the loop condition decides
        } catch (InterruptException e) {
          break;
        } catch (KafkaException e) {
          infraFailures++;
          log.warn(
              "event=inbox_poll_failed consumer={} failures={} error={}",
              cfg.name(),
              infraFailures,
              e.toString());
          pause(infraDelay());
        }
      }
    } catch (RuntimeException | Error e) {
      log.error("event=inbox_consumer_failed consumer={} error={}", cfg.name(), e.toString(), e);
    } finally {
      shutdown();
    }
  }

  private void shutdown() {
    discardConnection();
    try {
      for (int tries = 1; tries <= 2; tries++) {
        try {
          commitPending();
          break;
        } catch (WakeupException e) {
          // the wakeup of stop() landed here instead of in poll(): once more
        } catch (RuntimeException e) {
          log.warn(
              "event=inbox_final_commit_failed consumer={} error={}", cfg.name(), e.toString());
          break;
        }
      }
    } finally {
      try {
        consumer.close(cfg.closeTimeout());
      } catch (RuntimeException e) {
        log.warn(
            "event=inbox_consumer_close_failed consumer={} error={}", cfg.name(), e.toString());
      }
      log.info("event=inbox_consumer_stopped consumer={}", cfg.name());
    }
  }

  private void process(ConsumerRecords<byte[], byte[]> records) {
    long started = System.nanoTime();
    Map<TopicPartition, Long> next = new HashMap<>();
    Result stoppedBy = null;
    outer:
    for (TopicPartition tp : records.partitions()) {
      for (ConsumerRecord<byte[], byte[]> r : records.records(tp)) {
        if (!running) {
          stoppedBy = Result.STOPPED;
          break outer;
        }
        if (System.nanoTime() - started > cfg.pollBudget().toNanos()) {
          // give the consumer back to poll() before max.poll.interval.ms runs out
          log.info(
              "event=inbox_poll_budget_spent consumer={} budget={}", cfg.name(), cfg.pollBudget());
          stoppedBy = Result.STOPPED;
          break outer;
        }
        Result result = apply(r);
        if (result == Result.INFRA || result == Result.STOPPED) {
          stoppedBy = result;
          break outer;
        }
        next.put(tp, r.offset() + 1);
        pending.put(tp, new OffsetAndMetadata(r.offset() + 1));
      }
    }
    discardConnection();
    if (stoppedBy != null) {
      seekBack(records, next);
    }
    commitPending();
    if (stoppedBy == Result.INFRA) {
      infraFailures++;
      pause(infraDelay());
    } else {
      infraFailures = 0;
    }
  }

  /** Points every partition of {@code records} back at its first record that is not done. */
  private void seekBack(ConsumerRecords<byte[], byte[]> records, Map<TopicPartition, Long> next) {
    var assigned = consumer.assignment();
    for (TopicPartition tp : records.partitions()) {
      List<ConsumerRecord<byte[], byte[]>> list = records.records(tp);
      long first = next.getOrDefault(tp, list.get(0).offset());
      if (first <= list.get(list.size() - 1).offset() && assigned.contains(tp)) {
        consumer.seek(tp, first);
      }
    }
  }

  private void commitPending() {
    if (pending.isEmpty()) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>(pending);
    try {
      consumer.commitSync(offsets, cfg.commitTimeout());
      offsets.forEach((tp, o) -> pending.remove(tp, o));
    } catch (WakeupException e) {
      throw e;
    } catch (KafkaException e) {
      // the effects are committed in the database: a redelivery is skipped by the inbox
      log.warn(
          "event=inbox_offset_commit_failed consumer={} partitions={} error={}",
          cfg.name(),
          offsets.size(),
          e.toString());
    }
  }

  // ---------------------------------------------------------------- one record

  private Result apply(ConsumerRecord<byte[], byte[]> r) {
    cfg.metrics().consumed(r.topic());
    String id = EventIds.of(r);
    String lastError = null;
    for (int attempt = 1; ; attempt++) {
      Attempt a = attempt(r, id);
      switch (a.result) {
        case APPLIED -> {
          long createdAt = EventIds.createdAtMillis(r);
          cfg.metrics()
              .applied(
                  r.topic(),
                  createdAt < 0 ? -1 : Math.max(0, System.currentTimeMillis() - createdAt));
          log.debug(
              "event=inbox_applied consumer={} message_id={} topic={} partition={} offset={}",
              cfg.name(),
              id,
              r.topic(),
              r.partition(),
              r.offset());
          return Result.APPLIED;
        }
        case DUPLICATE -> {
          cfg.metrics().duplicate(r.topic());
          log.debug(
              "event=inbox_duplicate consumer={} message_id={} topic={} partition={} offset={}",
              cfg.name(),
              id,
              r.topic(),
              r.partition(),
              r.offset());
          return Result.DUPLICATE;
        }
        case INFRA -> {
          log.warn(
              "event=inbox_store_failed consumer={} message_id={} topic={} partition={} offset={}"
                  + " error={}",
              cfg.name(),
              id,
              r.topic(),
              r.partition(),
              r.offset(),
              a.error);
          return Result.INFRA;
        }
        default -> lastError = a.error;
      }
      cfg.metrics().failed(r.topic());
      if (attempt >= cfg.maxAttempts()) {
        return park(r, id, attempt, lastError);
      }
      Duration delay = backoff(attempt);
      log.warn(
          "event=inbox_handler_failed consumer={} message_id={} topic={} partition={} offset={}"
              + " attempt={} retry_in={} error={}",
          cfg.name(),
          id,
          r.topic(),
          r.partition(),
          r.offset(),
          attempt,
          delay,
          lastError);
      if (pause(delay)) {
        return Result.STOPPED;
      }
    }
  }

  /** The outcome of one try, with the error of a failed one. */
  private record Attempt(Result result, String error) {}

  private Attempt attempt(ConsumerRecord<byte[], byte[]> r, String id) {
    Connection c;
    try {
      c = connection();
    } catch (SQLException | RuntimeException e) {
      return new Attempt(Result.INFRA, Outcome.describe(e));
    }
    boolean fresh;
    try {
      fresh = cfg.inbox().tryRecord(c, cfg.name(), id);
    } catch (RuntimeException e) {
      return infra(Outcome.describe(e));
    }
    if (!fresh) {
      if (!rollback(c)) {
        return infra("rollback failed");
      }
      return new Attempt(Result.DUPLICATE, null);
    }
    try {
      cfg.handler().handle(r, c);
    } catch (Exception | LinkageError | AssertionError | StackOverflowError e) {
      if (!rollback(c)) {
        discardConnection();
      }
      return new Attempt(Result.HANDLER_FAILED, Outcome.describe(e));
    }
    try {
      c.commit();
    } catch (SQLException | RuntimeException e) {
      // whether it committed is unknown: come back to the record, the inbox decides
      return infra("commit failed: " + Outcome.describe(e));
    }
    return new Attempt(Result.APPLIED, null);
  }

  private Attempt infra(String error) {
    discardConnection();
    return new Attempt(Result.INFRA, error);
  }

  /**
   * The connection of the current poll batch, in a transaction; one per batch rather than one per
   * record saves the pool round trip and two autocommit switches per record.
   */
  private Connection connection() throws SQLException {
    if (connection == null) {
      Connection c = cfg.dataSource().getConnection();
      try {
        c.setAutoCommit(false);
      } catch (SQLException | RuntimeException e) {
        closeQuietly(c);
        throw e;
      }
      connection = c;
    }
    return connection;
  }

  /** Rolls back what is open and gives the connection back to the pool. */
  private void discardConnection() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      rollback(c);
      try {
        c.setAutoCommit(true);
      } catch (SQLException | RuntimeException ignored) {
        // a broken connection: the pool finds out when it is closed
      }
      closeQuietly(c);
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException | RuntimeException ignored) {
      // nothing more to do with it
    }
  }

  private Result park(ConsumerRecord<byte[], byte[]> r, String id, int attempts, String error) {
    try {
      Connection c = connection();
      cfg.deadLetters().insert(c, cfg.name(), id, r, attempts, error);
      c.commit();
    } catch (SQLException | RuntimeException e) {
      discardConnection();
      log.warn(
          "event=inbox_park_failed consumer={} message_id={} topic={} partition={} offset={}"
              + " error={}",
          cfg.name(),
          id,
          r.topic(),
          r.partition(),
          r.offset(),
          e.toString());
      return Result.INFRA;
    }
    cfg.metrics().parked(r.topic());
    log.error(
        "event=inbox_parked consumer={} message_id={} topic={} partition={} offset={} attempts={}"
            + " error={}",
        cfg.name(),
        id,
        r.topic(),
        r.partition(),
        r.offset(),
        attempts,
        error);
    return Result.PARKED;
  }

  private static boolean rollback(Connection c) {
    try {
      c.rollback();
      return true;
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }

  // ---------------------------------------------------------------- waiting

  /** Exponential from the initial delay, capped at the maximum. */
  Duration backoff(int attempt) {
    long initial = cfg.backoffInitial().toMillis();
    long max = cfg.backoffMax().toMillis();
    long d = initial << Math.min(attempt - 1, 20);
    return Duration.ofMillis(Math.min(Math.max(d, initial), max));
  }

  private Duration infraDelay() {
    return backoff(Math.max(1, infraFailures));
  }

  /** Waits {@code d} or until stopped; returns true when stopped. */
  private boolean pause(Duration d) {
    try {
      return stop.await(d.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
      return true;
    }
  }

  /** Commits what is done before partitions move; forgets what can no longer be committed. */
  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      try {
        commitPending();
      } catch (WakeupException e) {
        commitPending();
      }
      pending.keySet().removeAll(partitions);
      log.info("event=inbox_partitions_revoked consumer={} partitions={}", cfg.name(), partitions);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      pending.keySet().removeAll(partitions);
      log.warn("event=inbox_partitions_lost consumer={} partitions={}", cfg.name(), partitions);
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      log.info("event=inbox_partitions_assigned consumer={} partitions={}", cfg.name(), partitions);
    }
  }
}
