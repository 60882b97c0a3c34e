package io.localmessage.kafka.internal;

import io.localmessage.inbox.Inbox;
import io.localmessage.kafka.RecordHandler;
import io.localmessage.spi.TracePropagation;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * The poll thread of a {@code KafkaInboxConsumer}: the only thread that touches the Kafka consumer.
 * It polls and hands each partition's records to that partition's {@link Lane}, which the {@link
 * Workers} apply in batches, one transaction per batch, partitions side by side. It pauses a
 * partition whose lane holds enough records and resumes it when the lane has drained, so polling
 * (and with it group membership) never waits for the database. It commits to Kafka only offsets
 * whose records are done in the database: on every loop asynchronously, and synchronously before
 * partitions move away (after waiting, bounded, for their batches in flight) and at shutdown. Not
 * API.
 */
public final class InboxLoop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(InboxLoop.class);

  /** How often the loop looks at the lanes while a partition is paused. */
  private static final Duration PAUSED_POLL = Duration.ofMillis(10);

  /** Everything the loop needs; built and checked by the public builder. */
  public record Config(
      String name,
      Collection<String> topics,
      RecordHandler handler,
      DataSource dataSource,
      Inbox inbox,
      InboxRows inboxRows,
      DeadLetters deadLetters,
      ConsumerMetrics metrics,
      int maxAttempts,
      Duration backoffInitial,
      Duration backoffMax,
      int batchSize,
      Duration batchTime,
      int concurrency,
      Duration pollTimeout,
      Duration commitTimeout,
      Duration closeTimeout,
      TracePropagation tracing) {}

  private final Config cfg;
  private final Consumer<byte[], byte[]> consumer;
  private final Workers workers;
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Map<TopicPartition, Lane> lanes = new HashMap<>();

  /** Lanes of partitions that went away while a batch was still running. */
  private final Map<TopicPartition, Lane> retiring = new HashMap<>();

  private final Map<TopicPartition, Long> committed = new HashMap<>();
  private final Set<TopicPartition> paused = new HashSet<>();
  private volatile Set<TopicPartition> assignment = Set.of();
  private volatile boolean running = true;
  private int pollFailures;

  public InboxLoop(Config cfg, Consumer<byte[], byte[]> consumer) {
    this.cfg = cfg;
    this.consumer = consumer;
    this.workers = new Workers(cfg, new Applier(cfg, cfg.inboxRows()));
  }

  /** Asks the loop to stop: batches in flight finish, what is done is committed, then it closes. */
  public void stop() {
    running = false;
    stop.countDown();
    consumer.wakeup();
  }

  /** Closes the Kafka consumer and the workers of a loop that never ran. */
  public void closeUnstarted() {
    running = false;
    workers.interrupt();
    consumer.close(Duration.ZERO);
  }

  /** The partitions this consumer owns now. */
  public Set<TopicPartition> assignment() {
    return assignment;
  }

  @Override
  public void run() {
    try {
      consumer.subscribe(cfg.topics(), new Rebalance());
      log.info(
          "event=inbox_consumer_started consumer={} topics={} batch_size={} concurrency={}",
          cfg.name(),
          cfg.topics(),
          cfg.batchSize(),
          cfg.concurrency());
      while (running) {
        try {
          ConsumerRecords<byte[], byte[]> records =
              consumer.poll(paused.isEmpty() ? cfg.pollTimeout() : PAUSED_POLL);
          dispatch(records);
          adjustPauses();
          commitDone(false);
          pollFailures = 0;
        } catch (WakeupException e) {
          // stop() woke a blocking call up: the loop condition decides
        } catch (InterruptException e) {
          break;
        } catch (KafkaException e) {
          pollFailures++;
          log.warn(
              "event=inbox_poll_failed consumer={} failures={} error={}",
              cfg.name(),
              pollFailures,
              e.toString());
          pause(workers.backoff(pollFailures));
        }
      }
    } catch (RuntimeException | Error e) {
      log.error("event=inbox_consumer_failed consumer={} error={}", cfg.name(), e.toString(), e);
    } finally {
      shutdown();
    }
  }

  private void dispatch(ConsumerRecords<byte[], byte[]> records) {
    for (TopicPartition tp : records.partitions()) {
      Lane lane = lanes.get(tp);
      if (lane == null) {
        continue; // not ours any more: the next owner fetches it from the committed offset
      }
      List<ConsumerRecord<byte[], byte[]>> list = records.records(tp);
      for (ConsumerRecord<byte[], byte[]> r : list) {
        cfg.metrics().consumed(r.topic());
      }
      if (lane.add(list)) {
        workers.submit(lane);
      }
    }
  }

  /**
   * Stops fetching for a partition whose lane holds two batches, and fetches again as soon as it
   * holds less, so the lane never runs dry while its next records are on their way.
   */
  private void adjustPauses() {
    for (Lane lane : lanes.values()) {
      boolean full = lane.held() >= 2 * cfg.batchSize();
      if (full && paused.add(lane.tp)) {
        consumer.pause(List.of(lane.tp));
      } else if (!full && paused.remove(lane.tp)) {
        consumer.resume(List.of(lane.tp));
      }
    }
  }

  /**
   * Commits each owned partition's offset that advanced: everything before it is done in the
   * database. Asynchronous in the loop (a failure is logged; the next loop commits again), and
   * synchronous when partitions go away or the loop stops.
   */
  private void commitDone(boolean sync) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (Lane lane : lanes.values()) {
      long next = lane.committable();
      if (next >= 0 && next > committed.getOrDefault(lane.tp, -1L)) {
        offsets.put(lane.tp, new OffsetAndMetadata(next));
      }
    }
    commit(offsets, sync);
  }

  private void commit(Map<TopicPartition, OffsetAndMetadata> offsets, boolean sync) {
    if (offsets.isEmpty()) {
      return;
    }
    if (!sync) {
      offsets.forEach((tp, o) -> committed.put(tp, o.offset()));
      consumer.commitAsync(
          offsets,
          (done, error) -> {
            if (error != null) {
              // sent again by the next loop; the records are done in the database anyway
              offsets.forEach((tp, o) -> committed.remove(tp, o.offset()));
              log.warn(
                  "event=inbox_offset_commit_failed consumer={} partitions={} error={}",
                  cfg.name(),
                  offsets.size(),
                  error.toString());
            }
          });
      return;
    }
    for (int tries = 1; ; tries++) {
      try {
        consumer.commitSync(offsets, cfg.commitTimeout());
        offsets.forEach((tp, o) -> committed.put(tp, o.offset()));
        return;
      } catch (WakeupException e) {
        if (tries == 2) {
          throw e;
        }
        // the wakeup of stop() landed here instead of in poll(): once more
      } catch (KafkaException e) {
        // the effects are committed in the database: a redelivery is skipped by the inbox
        log.warn(
            "event=inbox_offset_commit_failed consumer={} partitions={} error={}",
            cfg.name(),
            offsets.size(),
            e.toString());
        return;
      }
    }
  }

  /**
   * Retires the lanes of {@code partitions} and, with {@code wait}, waits (up to half the close
   * timeout) until no batch of theirs runs.
   */
  private Map<TopicPartition, Lane> retire(Collection<TopicPartition> partitions, boolean wait) {
    Map<TopicPartition, Lane> gone = new HashMap<>();
    for (TopicPartition tp : partitions) {
      Lane lane = lanes.remove(tp);
      paused.remove(tp);
      if (lane != null) {
        lane.retire();
        gone.put(tp, lane);
      }
    }
    if (wait) {
      long deadline = System.nanoTime() + cfg.closeTimeout().toNanos() / 2;
      try {
        for (Lane lane : gone.values()) {
          if (!lane.awaitIdle(deadline)) {
            log.warn(
                "event=inbox_batch_outlived_partition consumer={} partition={}: its records go to"
                    + " the next owner, whose inbox skips what this batch commits",
                cfg.name(),
                lane.tp);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    retiring.values().removeIf(Lane::idle);
    for (Lane lane : gone.values()) {
      if (!lane.idle()) {
        retiring.put(lane.tp, lane); // a later assignment of the partition waits for it
      }
    }
    return gone;
  }

  private void commitRetired(Map<TopicPartition, Lane> gone) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (Lane lane : gone.values()) {
      long next = lane.committable();
      if (next >= 0 && next > committed.getOrDefault(lane.tp, -1L)) {
        offsets.put(lane.tp, new OffsetAndMetadata(next));
      }
    }
    commit(offsets, true);
    gone.keySet().forEach(committed::remove);
  }

  private void shutdown() {
    try {
      Map<TopicPartition, Lane> gone = retire(List.copyOf(lanes.keySet()), true);
      boolean inside = gone.values().stream().anyMatch(l -> !l.idle()) || !retiring.isEmpty();
      workers.shutdown();
      if (inside || !workers.awaitTermination(Duration.ofSeconds(1))) {
        // a handler still inside after the wait: interrupted, its transaction rolls back
        workers.interrupt();
        workers.awaitTermination(Duration.ofSeconds(2));
      }
      try {
        commitRetired(gone);
      } catch (RuntimeException e) {
        log.warn("event=inbox_final_commit_failed consumer={} error={}", cfg.name(), e.toString());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      workers.interrupt();
    } finally {
      try {
        consumer.close(cfg.closeTimeout().dividedBy(4));
      } catch (RuntimeException e) {
        log.warn(
            "event=inbox_consumer_close_failed consumer={} error={}", cfg.name(), e.toString());
      }
      assignment = Set.of();
      log.info("event=inbox_consumer_stopped consumer={}", cfg.name());
    }
  }

  /** Waits {@code d} or until stopped. */
  private void pause(Duration d) {
    try {
      stop.await(d.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
  }

  /** Commits what is done before partitions move; never applies a record of a partition gone. */
  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      Map<TopicPartition, Lane> gone = retire(partitions, true);
      commitRetired(gone);
      updateAssignment();
      log.info("event=inbox_partitions_revoked consumer={} partitions={}", cfg.name(), partitions);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      // another member may own them already: no commit, no waiting
      retire(partitions, false);
      partitions.forEach(committed::remove);
      updateAssignment();
      log.warn("event=inbox_partitions_lost consumer={} partitions={}", cfg.name(), partitions);
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      for (TopicPartition tp : partitions) {
        Lane lane = new Lane(tp);
        Lane before = retiring.remove(tp);
        if (before != null && !before.idle()) {
          // a batch of the partition's last time here still runs: the new lane starts after it
          lane.holdUntil(before, workers::submit);
        }
        lanes.put(tp, lane);
      }
      updateAssignment();
      log.info("event=inbox_partitions_assigned consumer={} partitions={}", cfg.name(), partitions);
    }
  }

  private void updateAssignment() {
    assignment = Set.copyOf(lanes.keySet());
  }
}
