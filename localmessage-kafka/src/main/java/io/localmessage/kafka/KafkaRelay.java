package io.localmessage.kafka;

import io.localmessage.BatchHandler;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.Message;
import io.localmessage.MessageKind;
import io.localmessage.Outcome;
import io.localmessage.kafka.internal.ProducerSettings;
import io.localmessage.kafka.internal.RelayMetrics;
import io.localmessage.kafka.internal.SendErrors;
import io.localmessage.spi.TracePropagation;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outbox relay: a {@link BatchHandler} that publishes EVENT messages to Kafka and completes
 * each message from its own broker acknowledgement.
 *
 * <p>Each message becomes one record: topic = {@link Message#destination()} (or a {@link
 * TopicResolver}), key = {@link Message#aggregateId()} (so one aggregate stays in one partition),
 * value = payload, headers {@value RelayHeaders#EVENT_ID} (the idempotency key), {@value
 * RelayHeaders#BIZ_TYPE}, {@value RelayHeaders#TICKET_ID}, {@value RelayHeaders#CREATED_AT} (epoch
 * millis) plus the message's own headers. The whole batch is sent asynchronously in message id
 * order, then every send is awaited; a message succeeds only when the broker acknowledged its
 * record with {@code acks=all}. One failed record never fails or re-sends its neighbours.
 *
 * <p>Outcomes: acknowledged: success. Broker or network trouble, timeouts, a missing topic (with a
 * last_error that names the topic and auto-creation): retried with the type's backoff. Record too
 * large, serialization errors, authorization errors, an invalid topic name, no topic at all or a
 * message that is not an EVENT: DEAD with the reason. A producer that can no longer send (the
 * client's fatal errors of an idempotent producer: an out-of-order sequence, a fenced or
 * unsupported producer, no cluster authorization for idempotent writes; or a closed producer): the
 * batch's unacknowledged messages are retried, the rest of the batch is not sent on it, and the
 * relay's own producer is closed and replaced by a new one (logged {@code
 * event=relay_producer_replaced}, counted in {@code localmessage.kafka.producer.failures}); a
 * producer the caller owns is only reported, since the relay cannot recreate it.
 *
 * <p>Delivery is at least once: a record whose acknowledgement was lost is sent again, so consumers
 * dedupe by {@value RelayHeaders#EVENT_ID} (see {@link KafkaInboxConsumer}).
 *
 * <p><b>Timing.</b> The relay never returns while a send of the batch may still complete: it waits
 * for each send up to {@code delivery.timeout.ms} after the last send, and stops sending once
 * {@code max.block.ms} has been spent blocked in the producer. So a batch takes at most {@link
 * #requiredHandlerTimeout()} = {@code delivery.timeout.ms + 2 × max.block.ms + 2 s}; register the
 * type with a handler timeout at least that long ({@link #register} checks it) and an engine lease
 * longer than that plus the write-back margin (the engine checks that). With the defaults (15 s
 * delivery timeout, 5 s max block) this is 27 s, inside the core's default 30 s handler timeout and
 * 60 s lease.
 *
 * <p><b>Order.</b> Records of one aggregate go to one partition, and the idempotent producer keeps
 * them in send order. A retry can still overtake: if event 1 fails and event 2 of the same
 * aggregate succeeds, event 1 lands after it. Register the type with {@link
 * HandlerConfig.Builder#ordered(boolean) ordered(true)} when consumers need per-aggregate order:
 * then the engine never has two events of one aggregate in flight at once, so nothing can overtake.
 *
 * <p><b>Batches.</b> The engine hands the relay at most {@link HandlerConfig#batchSize()} messages
 * per call, and never more than it has free slots: raise the engine's {@code concurrency} (one slot
 * per message) for large batches.
 *
 * <p>Thread-safe; one relay may serve several biz types. {@link #close()} closes the producer only
 * when the relay created it; close the engine first.
 *
 * <p>(This file is longer than most: half of it is the builder, whose every setter checks its
 * bounds, kept next to the relay it configures.)
 */
public final class KafkaRelay implements BatchHandler, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KafkaRelay.class);

  public static final Duration DEFAULT_DELIVERY_TIMEOUT = ProducerSettings.DEFAULT_DELIVERY_TIMEOUT;
  public static final Duration DEFAULT_MAX_BLOCK = ProducerSettings.DEFAULT_MAX_BLOCK;
  public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(10);

  /** The span of one record's send, from the send to the broker's answer. */
  public static final String RELAY_SPAN = "localmessage.relay";

  /** Slack for the producer's own bookkeeping after delivery.timeout.ms has run out. */
  private static final Duration WAIT_MARGIN = Duration.ofSeconds(1);

  /** Slack between the relay's longest batch and the handler timeout. */
  private static final Duration HANDLER_MARGIN = Duration.ofSeconds(1);

  /** The caller's producer last reported unusable (reported once, not per batch). */
  private Producer<byte[], byte[]> reportedUnusable;

  /** The producer in use; replaced when it can no longer send (only one the relay created). */
  private final AtomicReference<Producer<byte[], byte[]>> producer;

  /** Creates the relay's own producers; null for a producer the caller owns. */
  private final Supplier<Producer<byte[], byte[]>> factory;

  private final boolean ownsProducer;
  private final Duration deliveryTimeout;
  private final Duration maxBlock;
  private final Duration closeTimeout;
  private final TopicResolver topics;
  private final RelayMetrics metrics;
  private final TracePropagation tracing;

  private KafkaRelay(
      Producer<byte[], byte[]> producer,
      Supplier<Producer<byte[], byte[]>> factory,
      boolean ownsProducer,
      Duration deliveryTimeout,
      Duration maxBlock,
      Duration closeTimeout,
      TopicResolver topics,
      RelayMetrics metrics,
      TracePropagation tracing) {
    this.producer = new AtomicReference<>(producer);
    this.factory = factory;
    this.ownsProducer = ownsProducer;
    this.deliveryTimeout = deliveryTimeout;
    this.maxBlock = maxBlock;
    this.closeTimeout = closeTimeout;
    this.topics = topics;
    this.metrics = metrics;
    this.tracing = tracing;
  }

  /** A builder: give it producer properties or a producer, then register the relay. */
  public static Builder builder() {
    return new Builder();
  }

  /** The shortest handler timeout under which a batch always finishes on its own. */
  public Duration requiredHandlerTimeout() {
    return deliveryTimeout.plus(maxBlock.multipliedBy(2)).plus(WAIT_MARGIN).plus(HANDLER_MARGIN);
  }

  /**
   * Throws an {@link IllegalArgumentException} when {@code handlerTimeout} is shorter than {@link
   * #requiredHandlerTimeout()}: the engine would time batches out while sends may still complete.
   */
  public void checkFits(Duration handlerTimeout) {
    Objects.requireNonNull(handlerTimeout, "handlerTimeout");
    if (handlerTimeout.compareTo(requiredHandlerTimeout()) < 0) {
      throw new IllegalArgumentException(
          "handler timeout "
              + handlerTimeout
              + " is shorter than the relay needs: "
              + requiredHandlerTimeout()
              + " = delivery.timeout.ms "
              + deliveryTimeout
              + " + 2 x max.block.ms "
              + maxBlock
              + " + 2 s margin. Raise the handler timeout (and the engine lease with it) or lower"
              + " the producer's delivery.timeout.ms / max.block.ms");
    }
  }

  /**
   * Registers this relay for {@code bizType} on {@code engine} after {@link #checkFits checking}
   * the handler timeout. Same as {@code engine.registerBatch(bizType, relay, config)} otherwise.
   */
  public LocalMessages register(LocalMessages engine, String bizType, HandlerConfig config) {
    Objects.requireNonNull(engine, "engine");
    Objects.requireNonNull(config, "config");
    checkFits(config.handlerTimeout());
    return engine.registerBatch(bizType, this, config);
  }

  @Override
  public List<Outcome> handle(List<Message> messages) {
    int n = messages.size();
    Outcome[] outcomes = new Outcome[n];
    String[] topicOf = new String[n];
    @SuppressWarnings("unchecked")
    Future<RecordMetadata>[] sends = new Future[n];
    long start = System.nanoTime();
    long lastSendReturned = start;
    Map<String, Outcome> failedTopics = new HashMap<>();
    boolean interrupted = false;
    TracePropagation.Span[] traced = traced(messages);
    Producer<byte[], byte[]> p = producer.get();
    Throwable unusable = null;
    for (int i : idOrder(messages)) {
      Message m = messages.get(i);
      if (interrupted) {
        outcomes[i] = Outcome.retry("not sent: the relay was interrupted (handler timeout)");
        continue;
      }
      if (unusable != null) {
        outcomes[i] = producerFailed(unusable, "not sent: ");
        continue;
      }
      Outcome refused = refuse(m);
      if (refused != null) {
        outcomes[i] = refused;
        continue;
      }
      String topic = topicOf[i] = resolveTopic(m);
      if (topic == null) {
        outcomes[i] =
            Outcome.permanent(
                "no topic: the ticket has no destination and no TopicResolver named one");
        continue;
      }
      Outcome topicFailure = failedTopics.get(topic);
      if (topicFailure != null) {
        outcomes[i] = topicFailure;
        continue;
      }
      if (System.nanoTime() - start > maxBlock.toNanos()) {
        outcomes[i] =
            Outcome.retry(
                "not sent: this batch already spent max.block.ms ("
                    + maxBlock
                    + ") blocked in the producer (broker unreachable or send buffer full)");
        continue;
      }
      try {
        sends[i] = send(p, topic, m, traced == null ? null : traced[i]);
      } catch (InterruptException e) {
        interrupted = true;
        outcomes[i] = Outcome.retry("not sent: the relay was interrupted (handler timeout)");
        continue;
      } catch (RuntimeException e) {
        if (SendErrors.isProducerFatal(e)) {
          unusable = e;
          outcomes[i] = producerFailed(e, "");
        } else {
          outcomes[i] = failed(m, topic, e, failedTopics);
        }
        continue;
      } finally {
        lastSendReturned = System.nanoTime();
      }
      // a send that failed inside the producer (e.g. no metadata for the topic) is done already
      if (sends[i].isDone()) {
        Throwable error = failureOf(sends[i]);
        if (error != null) {
          if (SendErrors.isProducerFatal(error)) {
            unusable = error;
            outcomes[i] = producerFailed(error, "");
          } else {
            outcomes[i] = failed(m, topic, error, failedTopics);
          }
          sends[i] = null;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    long deadline = lastSendReturned + deliveryTimeout.plus(WAIT_MARGIN).toNanos();
    for (int i = 0; i < n; i++) {
      if (sends[i] != null) {
        Throwable fatal = fatalFailureOf(sends[i], deadline);
        if (fatal != null) {
          unusable = fatal;
          outcomes[i] = producerFailed(fatal, "");
        } else {
          outcomes[i] = await(messages.get(i), topicOf[i], sends[i], deadline);
        }
      }
    }
    if (unusable != null) {
      replace(p, unusable);
    }
    if (traced != null) {
      for (int i = 0; i < n; i++) {
        Outcome o = outcomes[i];
        traced[i].end(o.type().name().toLowerCase(Locale.ROOT), o.error());
      }
    }
    return List.of(outcomes);
  }

  /**
   * With tracing, one {@code localmessage.handle} span per message, each a child of its own save:
   * the messages of a batch come from different traces, so the relay restores each one itself.
   */
  private TracePropagation.Span[] traced(List<Message> messages) {
    if (tracing == TracePropagation.NONE) {
      return null;
    }
    TracePropagation.Span[] spans = new TracePropagation.Span[messages.size()];
    for (int i = 0; i < spans.length; i++) {
      Message m = messages.get(i);
      spans[i] = tracing.restore(TracePropagation.Hop.handle(m), m.headers());
    }
    return spans;
  }

  /**
   * The record's trace headers: a {@code localmessage.relay} span, a child of the message's
   * execution, whose context the consumer continues. Ends when the send completes.
   */
  private TracePropagation.Span relaySpan(
      Message m, String topic, TracePropagation.Span execution, RecordHeaders headers) {
    Map<String, String> carrier = new LinkedHashMap<>();
    TracePropagation.Span span;
    try (TracePropagation.Scope in = execution.makeCurrent()) {
      span =
          tracing.inject(
              new TracePropagation.Hop(
                  RELAY_SPAN,
                  TracePropagation.Hop.Kind.MESSAGE,
                  "publish " + topic,
                  Map.of("biz_type", m.bizType(), "topic", topic),
                  Map.of("message_id", Long.toString(m.id()))),
              carrier);
    }
    for (Map.Entry<String, String> e : carrier.entrySet()) {
      headers.remove(e.getKey()); // the message's copy of the header is the save's context
      headers.add(e.getKey(), utf8(e.getValue()));
    }
    return span;
  }

  private static Outcome refuse(Message m) {
    if (m.kind() != MessageKind.EVENT) {
      return Outcome.permanent(
          "the Kafka relay publishes EVENT tickets; ticket "
              + m.id()
              + " of '"
              + m.bizType()
              + "' is "
              + m.kind()
              + " (save it with NewMessage.event, or register another handler)");
    }
    return null;
  }

  private String resolveTopic(Message m) {
    String topic;
    try {
      topic = topics.topicFor(m);
    } catch (RuntimeException e) {
      log.warn(
          "event=topic_resolver_failed biz_type={} id={} idem_key={} error={}",
          m.bizType(),
          m.id(),
          m.idemKey(),
          e.toString());
      return null;
    }
    return topic == null || topic.isBlank() ? null : topic;
  }

  private Future<RecordMetadata> send(
      Producer<byte[], byte[]> producer, String topic, Message m, TracePropagation.Span execution) {
    RecordHeaders headers = new RecordHeaders();
    for (Map.Entry<String, String> h : m.headers().entrySet()) {
      if (!RelayHeaders.isReserved(h.getKey())) {
        headers.add(h.getKey(), utf8(h.getValue()));
      }
    }
    headers.add(RelayHeaders.EVENT_ID, utf8(m.idemKey()));
    headers.add(RelayHeaders.BIZ_TYPE, utf8(m.bizType()));
    headers.add(RelayHeaders.TICKET_ID, utf8(Long.toString(m.id())));
    headers.add(RelayHeaders.CREATED_AT, utf8(Long.toString(m.createdAt().toEpochMilli())));
    TracePropagation.Span span =
        execution == null ? TracePropagation.Span.NOOP : relaySpan(m, topic, execution, headers);
    byte[] key = m.aggregateId() == null ? null : utf8(m.aggregateId());
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(topic, null, key, m.payload(), headers);
    long sentAt = System.nanoTime();
    String bizType = m.bizType();
    try {
      return producer.send(
          record,
          (metadata, error) -> {
            try {
              metrics.published(bizType, error == null, System.nanoTime() - sentAt);
            } catch (RuntimeException e) {
              // a meter must never break the producer's I/O thread
            }
            span.end(error == null ? "acked" : "failed", error == null ? null : error.toString());
          });
    } catch (RuntimeException e) {
      span.end("failed", e.toString());
      throw e;
    }
  }

  private Outcome await(Message m, String topic, Future<RecordMetadata> send, long deadline) {
    try {
      long wait = Math.max(0, deadline - System.nanoTime());
      send.get(wait, TimeUnit.NANOSECONDS);
      return Outcome.success();
    } catch (ExecutionException e) {
      return failed(m, topic, e.getCause(), null);
    } catch (TimeoutException e) {
      log.warn(
          "event=relay_ack_overdue biz_type={} id={} idem_key={} topic={} waited={}",
          m.bizType(),
          m.id(),
          m.idemKey(),
          topic,
          deliveryTimeout.plus(WAIT_MARGIN));
      return Outcome.retry(
          "no acknowledgement for topic '"
              + topic
              + "' within delivery.timeout.ms "
              + deliveryTimeout
              + " (is the producer's delivery.timeout.ms longer than the relay was told?); the"
              + " record may still arrive and is sent again");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      // the engine already recorded a timeout for the batch; this outcome is not used
      return Outcome.retry("interrupted while waiting for the broker (handler timeout)");
    }
  }

  private static Outcome failed(
      Message m, String topic, Throwable error, Map<String, Outcome> failedTopics) {
    Outcome o = SendErrors.classify(error, topic);
    if (failedTopics != null && SendErrors.isTopicWide(error)) {
      failedTopics.put(topic, o);
      log.warn(
          "event=relay_topic_failed topic={} biz_type={} id={} idem_key={} outcome={}",
          topic,
          m.bizType(),
          m.id(),
          m.idemKey(),
          o);
    } else {
      log.debug(
          "event=relay_send_failed topic={} biz_type={} id={} idem_key={} outcome={}",
          topic,
          m.bizType(),
          m.id(),
          m.idemKey(),
          o);
    }
    return o;
  }

  /**
   * The error of a send that failed because its producer can no longer send, waiting for the send
   * up to {@code deadline}; null when it succeeded, failed otherwise, or is still open (then {@link
   * #await} decides).
   */
  private static Throwable fatalFailureOf(Future<RecordMetadata> send, long deadline) {
    try {
      send.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      return null;
    } catch (ExecutionException e) {
      return SendErrors.isProducerFatal(e.getCause()) ? e.getCause() : null;
    } catch (TimeoutException | java.util.concurrent.CancellationException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  private Outcome producerFailed(Throwable error, String prefix) {
    return Outcome.retry(
        prefix
            + "the Kafka producer can no longer send ("
            + Outcome.describe(error)
            + "); "
            + (factory != null
                ? "the relay replaces it with a new one and the message is sent again"
                : "the producer given to the relay must be closed and the relay built with a new"
                    + " one"));
  }

  /**
   * Replaces {@code failed}, the producer a batch used, after an error after which it can no longer
   * send (the client documents these as fatal for an idempotent producer): the relay's own producer
   * is closed and a new one created; the batch's messages are retried by the engine, one
   * aggregate's in order when the type is ordered. Once per failed producer, whatever the number of
   * batches that saw it fail. A producer the caller owns cannot be replaced: that is logged and
   * counted.
   */
  private void replace(Producer<byte[], byte[]> failed, Throwable cause) {
    synchronized (producer) {
      if (producer.get() != failed) {
        return; // another batch replaced it already
      }
      metrics.producerUnusable(factory != null);
      if (factory == null) {
        if (reportedUnusable != failed) {
          reportedUnusable = failed;
          log.error(
              "event=relay_producer_unusable error={} note=the producer given to the relay can no"
                  + " longer send; close it and build the relay with a new one",
              Outcome.describe(cause));
        }
        return;
      }
      Producer<byte[], byte[]> fresh;
      try {
        fresh = factory.get();
      } catch (RuntimeException e) {
        log.error(
            "event=relay_producer_replace_failed error={} cause={} note=tried again after the next"
                + " batch that fails",
            e.toString(),
            Outcome.describe(cause));
        return;
      }
      producer.set(fresh);
      log.error(
          "event=relay_producer_replaced cause={} note=the old producer could no longer send; its"
              + " unacknowledged messages are retried",
          Outcome.describe(cause));
      try {
        failed.close(Duration.ZERO);
      } catch (RuntimeException e) {
        log.warn("event=relay_producer_close_failed error={}", e.toString());
      }
    }
  }

  private static Throwable failureOf(Future<RecordMetadata> done) {
    try {
      done.get();
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return e;
    } catch (java.util.concurrent.CancellationException e) {
      return e;
    }
  }

  /** Indices of {@code messages} in message id order: older events of an aggregate go first. */
  private static List<Integer> idOrder(List<Message> messages) {
    List<Integer> order = new ArrayList<>(messages.size());
    for (int i = 0; i < messages.size(); i++) {
      order.add(i);
    }
    order.sort(Comparator.comparingLong(i -> messages.get(i).id()));
    return order;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Closes the producer if the relay created it (bounded by the close timeout); else nothing. */
  @Override
  public void close() {
    if (ownsProducer) {
      synchronized (producer) {
        producer.get().close(closeTimeout);
      }
    }
  }

  @Override
  public String toString() {
    return "KafkaRelay{deliveryTimeout="
        + deliveryTimeout
        + ", maxBlock="
        + maxBlock
        + ", ownsProducer="
        + ownsProducer
        + "}";
  }

  /**
   * Builds a {@link KafkaRelay} on either a producer the caller owns ({@link #producer}) or
   * producer properties ({@link #producerProperties}), from which the relay creates and owns one.
   */
  public static final class Builder {
    private Producer<byte[], byte[]> producer;
    private Map<String, ?> properties;
    private Duration deliveryTimeout;
    private Duration maxBlock;
    private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
    private TopicResolver topics = TopicResolver.DESTINATION;
    private Object meterRegistry;
    private TracePropagation tracing = TracePropagation.NONE;
    private Function<Map<String, Object>, Producer<byte[], byte[]>> producerFactory =
        KafkaProducer::new;

    private Builder() {}

    /**
     * Test seam: how the relay creates its own producers from the checked properties (default
     * {@code new KafkaProducer<>(properties)}), so a test can make one fail as the client's fatal
     * errors do.
     */
    Builder producerFactory(Function<Map<String, Object>, Producer<byte[], byte[]>> factory) {
      this.producerFactory = Objects.requireNonNull(factory, "factory");
      return this;
    }

    /**
     * A producer the caller owns and closes. It must be idempotent with {@code acks=all}; the relay
     * cannot read its settings, so declare its {@code delivery.timeout.ms} and {@code max.block.ms}
     * with {@link #deliveryTimeout} and {@link #maxBlock} when they differ from the relay's
     * defaults.
     */
    public Builder producer(Producer<byte[], byte[]> producer) {
      this.producer = Objects.requireNonNull(producer, "producer");
      return this;
    }

    /**
     * Properties of a producer the relay creates and closes: at least {@code bootstrap.servers}.
     * Defaults: {@code enable.idempotence=true}, {@code acks=all}, {@code
     * max.in.flight.requests.per.connection=5}, {@code delivery.timeout.ms=15000}, {@code
     * max.block.ms=5000}, {@code request.timeout.ms=10000}, {@code linger.ms=5}, {@code
     * batch.size=65536}. Settings that weaken delivery (no idempotence, acks other than all, more
     * than 5 in flight, a transactional id, non-byte serializers) are refused.
     */
    public Builder producerProperties(Map<String, ?> properties) {
      this.properties = Map.copyOf(Objects.requireNonNull(properties, "properties"));
      return this;
    }

    /** The producer's {@code delivery.timeout.ms}: 1 s to 10 min (default 15 s). */
    public Builder deliveryTimeout(Duration deliveryTimeout) {
      this.deliveryTimeout = ProducerSettings.checkDeliveryTimeout(deliveryTimeout);
      return this;
    }

    /** The producer's {@code max.block.ms}: 0 to 1 min (default 5 s). */
    public Builder maxBlock(Duration maxBlock) {
      this.maxBlock = ProducerSettings.checkMaxBlock(maxBlock);
      return this;
    }

    /** How long {@link #close()} waits for an owned producer to flush: 0 to 5 min. */
    public Builder closeTimeout(Duration closeTimeout) {
      Objects.requireNonNull(closeTimeout, "closeTimeout");
      if (closeTimeout.isNegative() || closeTimeout.compareTo(Duration.ofMinutes(5)) > 0) {
        throw new IllegalArgumentException(
            "closeTimeout must be between 0 and 5 minutes, was " + closeTimeout);
      }
      this.closeTimeout = closeTimeout;
      return this;
    }

    /** Chooses each message's topic (default: its destination). */
    public Builder topicResolver(TopicResolver resolver) {
      this.topics = Objects.requireNonNull(resolver, "resolver");
      return this;
    }

    /**
     * Records {@code localmessage.kafka.publish} (send to acknowledgement, tags {@code biz_type},
     * {@code result}) on a Micrometer {@code MeterRegistry}; typed as Object so Micrometer stays
     * optional.
     */
    public Builder meterRegistry(Object meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    /**
     * Carries each message's trace onto its record (default {@link TracePropagation#NONE}: the
     * record carries the message's own headers, {@code traceparent} included, as they were saved).
     * With tracing, each message of a batch runs in a {@code localmessage.handle} span, a child of
     * its save, and its record is sent in a {@value KafkaRelay#RELAY_SPAN} span below it (tags
     * {@code biz_type}, {@code topic}, outcome {@code acked} or {@code failed}), whose context
     * replaces the record's trace headers: the consumer continues from there. Give it the same
     * propagation as the engine.
     */
    public Builder tracing(TracePropagation tracing) {
      this.tracing = TracePropagation.failSafe(Objects.requireNonNull(tracing, "tracing"));
      return this;
    }

    /**
     * The relay.
     *
     * @throws IllegalArgumentException unless exactly one of producer properties and producer was
     *     given, or when the settings do not fit together
     */
    public KafkaRelay build() {
      if ((producer == null) == (properties == null)) {
        throw new IllegalArgumentException(
            "give exactly one of producer(...) (you own it) or producerProperties(...) (the relay"
                + " owns it)");
      }
      RelayMetrics metrics = RelayMetrics.of(meterRegistry);
      if (producer != null) {
        return new KafkaRelay(
            producer,
            null,
            false,
            deliveryTimeout != null ? deliveryTimeout : DEFAULT_DELIVERY_TIMEOUT,
            maxBlock != null ? maxBlock : DEFAULT_MAX_BLOCK,
            closeTimeout,
            topics,
            metrics,
            tracing);
      }
      ProducerSettings s = ProducerSettings.of(properties, deliveryTimeout, maxBlock);
      Map<String, Object> props = s.properties();
      Function<Map<String, Object>, Producer<byte[], byte[]>> create = producerFactory;
      Supplier<Producer<byte[], byte[]>> factory =
          () -> {
            Producer<byte[], byte[]> created = create.apply(props);
            log.info(
                "event=relay_producer_created client_id={} delivery_timeout={} max_block={}",
                props.get("client.id"),
                s.deliveryTimeout(),
                s.maxBlock());
            return created;
          };
      return new KafkaRelay(
          factory.get(),
          factory,
          true,
          s.deliveryTimeout(),
          s.maxBlock(),
          closeTimeout,
          topics,
          metrics,
          tracing);
    }
  }
}
