package io.localmessage.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.spi.TracePropagation;
import io.localmessage.test.kafka.Topics;
import io.localmessage.testing.TestTracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One trace over the real broker: the request that saved an event, the relay's execution of it and
 * its record's send, and the consumer's application of the record in another service, each a child
 * of the one before. A redelivered record shows as a duplicate in the same trace.
 */
abstract class AbstractTracingTest extends InboxTestBase {
  private TestTracing deposits;
  private TestTracing ledgerService;

  @BeforeEach
  void tracers() {
    deposits = new TestTracing("deposits");
    ledgerService = new TestTracing("ledger", deposits.exporter);
  }

  @AfterEach
  void closeTracers() {
    deposits.close();
    ledgerService.close();
  }

  private static String attr(SpanData s, String key) {
    return s.getAttributes().get(AttributeKey.stringKey(key));
  }

  private static String service(SpanData s) {
    return s.getResource().getAttribute(AttributeKey.stringKey("service.name"));
  }

  @Test
  void theConsumersSpanIsAChildOfTheRelaysSendWhichIsAChildOfTheSave() throws Exception {
    String topic = Topics.unique("traced");
    broker.createTopic(topic, 2);
    TracePropagation producing = TracePropagation.observation(deposits.registry);
    LocalMessages lm = fx.build(fx.builder().lease(Duration.ofSeconds(10)).tracing(producing));
    KafkaRelay relay =
        KafkaRelay.builder()
            .producerProperties(java.util.Map.of("bootstrap.servers", broker.bootstrapServers()))
            .deliveryTimeout(Duration.ofSeconds(3))
            .maxBlock(Duration.ofSeconds(1))
            .tracing(producing)
            .build();
    try {
      relay.register(lm, TYPE, AbstractRelayTest.relayConfig().build());
      lm.start();
      List<String> currentInHandler = new CopyOnWriteArrayList<>();
      List<ConsumerRecord<byte[], byte[]>> seen = new CopyOnWriteArrayList<>();
      started(
          consumer("ledger", topic)
              .tracing(TracePropagation.observation(ledgerService.registry))
              .handler(
                  (record, c) -> {
                    currentInHandler.add(
                        io.opentelemetry.api.trace.Span.current().getSpanContext().getSpanId());
                    seen.add(record);
                    ledgerWriter().handle(record, c);
                  }));
      deposits.inRequest(
          "POST /deposits",
          () ->
              lm.inTransaction(
                  c ->
                      lm.save(
                          c,
                          NewMessage.event(TYPE, "dep-1")
                              .aggregateId("acct-1")
                              .destination(topic)
                              .payload("100")
                              .build())));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> ledgerRows() == 1 && deposits.spans("inbox ledger").size() == 1);

      SpanData request = deposits.span("POST /deposits");
      SpanData save = deposits.span("save " + TYPE);
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(deposits.spans("handle " + TYPE))
                      .as(deposits.spans().toString())
                      .hasSize(1));
      SpanData handle = deposits.span("handle " + TYPE);
      SpanData publish = deposits.span("publish " + topic);
      SpanData inbox = deposits.span("inbox ledger");
      assertThat(save.getParentSpanId()).isEqualTo(request.getSpanId());
      assertThat(handle.getParentSpanId()).isEqualTo(save.getSpanId());
      assertThat(publish.getParentSpanId()).isEqualTo(handle.getSpanId());
      assertThat(inbox.getParentSpanId()).isEqualTo(publish.getSpanId());
      for (SpanData s : List.of(save, handle, publish, inbox)) {
        assertThat(s.getTraceId()).isEqualTo(request.getTraceId());
      }
      assertThat(publish.getKind()).isEqualTo(SpanKind.PRODUCER);
      assertThat(attr(publish, "outcome")).isEqualTo("acked");
      assertThat(attr(publish, "topic")).isEqualTo(topic);
      assertThat(attr(handle, "outcome")).isEqualTo("success");
      assertThat(inbox.getKind()).isEqualTo(SpanKind.CONSUMER);
      assertThat(attr(inbox, "outcome")).isEqualTo("applied");
      assertThat(service(inbox)).isEqualTo("ledger");
      assertThat(service(publish)).isEqualTo("deposits");
      assertThat(currentInHandler).containsExactly(inbox.getSpanId());
      // the record's traceparent is the relay's send, not the save's context copied along
      String traceparent = Topics.header(seen.get(0), "traceparent");
      assertThat(traceparent).contains(publish.getSpanId()).doesNotContain(save.getSpanId());
      assertThat(seen.get(0).headers().headers("traceparent")).hasSize(1);

      // the same record again: skipped by the inbox, and seen in the trace as a duplicate
      ConsumerRecord<byte[], byte[]> r = seen.get(0);
      try (KafkaProducer<byte[], byte[]> p = Topics.producer(broker.bootstrapServers())) {
        p.send(new ProducerRecord<>(topic, null, r.key(), r.value(), r.headers()))
            .get(30, TimeUnit.SECONDS);
      }
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> deposits.spans("inbox ledger").size() == 2);
      SpanData dup =
          deposits.spans("inbox ledger").stream()
              .filter(s -> "duplicate".equals(attr(s, "outcome")))
              .findFirst()
              .orElseThrow();
      assertThat(dup.getParentSpanId()).isEqualTo(publish.getSpanId());
      assertThat(ledgerRows()).isEqualTo(1);
    } finally {
      fx.close();
      relay.close();
    }
  }
}
