package io.localmessage.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.HandlerConfig;
import io.localmessage.Outcome;
import io.localmessage.kafka.internal.ProducerSettings;
import io.localmessage.kafka.internal.SendErrors;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

/** Producer settings, the timing contract and error classes of the relay; no broker needed. */
class RelaySettingsTest {
  private static final Map<String, Object> BOOTSTRAP = Map.of("bootstrap.servers", "127.0.0.1:1");

  @Test
  void defaultsAreRightForMoney() {
    ProducerSettings s = ProducerSettings.of(BOOTSTRAP, null, null);
    assertThat(s.properties())
        .containsEntry("enable.idempotence", "true")
        .containsEntry("acks", "all")
        .containsEntry("max.in.flight.requests.per.connection", "5")
        .containsEntry("delivery.timeout.ms", "15000")
        .containsEntry("max.block.ms", "5000")
        .containsEntry("request.timeout.ms", "7500")
        .containsEntry(
            "key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
  }

  @Test
  void settingsThatWeakenDeliveryAreRefusedWithTheReason() {
    assertThatThrownBy(() -> settings(Map.of("acks", "1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("acks=1")
        .hasMessageContaining("acks=all");
    assertThatThrownBy(() -> settings(Map.of("enable.idempotence", "false")))
        .hasMessageContaining("enable.idempotence=false");
    assertThatThrownBy(() -> settings(Map.of("max.in.flight.requests.per.connection", 6)))
        .hasMessageContaining("between 1 and 5");
    assertThatThrownBy(() -> settings(Map.of("transactional.id", "tx")))
        .hasMessageContaining("transactional.id");
    assertThatThrownBy(
            () ->
                settings(
                    Map.of(
                        "value.serializer",
                        "org.apache.kafka.common.serialization.StringSerializer")))
        .hasMessageContaining("ByteArraySerializer");
    assertThatThrownBy(() -> ProducerSettings.of(Map.of(), null, null))
        .hasMessageContaining("bootstrap.servers");
    assertThatThrownBy(
            () -> settings(Map.of("delivery.timeout.ms", "5000", "request.timeout.ms", "9000")))
        .hasMessageContaining("linger.ms")
        .hasMessageContaining("request.timeout.ms 9000");
  }

  @Test
  void aPropertyAndTheBuilderMustAgreeOnTheDeliveryTimeout() {
    assertThat(settings(Map.of("delivery.timeout.ms", 20000)).deliveryTimeout())
        .isEqualTo(Duration.ofSeconds(20));
    assertThatThrownBy(
            () ->
                ProducerSettings.of(
                    Map.of("bootstrap.servers", "x:1", "delivery.timeout.ms", "20000"),
                    Duration.ofSeconds(10),
                    null))
        .hasMessageContaining("contradicts");
    assertThatThrownBy(() -> KafkaRelay.builder().deliveryTimeout(Duration.ofHours(1)))
        .hasMessageContaining("deliveryTimeout");
  }

  @Test
  void theHandlerTimeoutMustCoverTheLongestBatch() {
    try (KafkaRelay relay = KafkaRelay.builder().producerProperties(BOOTSTRAP).build()) {
      assertThat(relay.requiredHandlerTimeout()).isEqualTo(Duration.ofSeconds(27));
      relay.checkFits(HandlerConfig.DEFAULT_HANDLER_TIMEOUT);
      assertThatThrownBy(() -> relay.checkFits(Duration.ofSeconds(26)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("PT26S")
          .hasMessageContaining("PT27S")
          .hasMessageContaining("delivery.timeout.ms");
    }
    assertThatThrownBy(() -> KafkaRelay.builder().build())
        .hasMessageContaining("exactly one of producer");
  }

  @Test
  void errorsAreClassifiedByWhetherARetryCanHelp() {
    String t = "payments";
    assertPermanent(new RecordTooLargeException("big"), "too large");
    assertPermanent(new SerializationException("bad"), "serialize");
    assertPermanent(new TopicAuthorizationException("no"), "not authorized");
    assertPermanent(new ClusterAuthorizationException("no"), "not authorized");
    assertPermanent(new InvalidTopicException("bad name"), "invalid topic");
    assertRetry(new NotLeaderOrFollowerException("moving"), "send failed");
    assertRetry(new TimeoutException("Expiring 1 record(s)"), "no acknowledgement");
    assertRetry(new BufferExhaustedException("full"), "no acknowledgement");
    assertRetry(new IllegalStateException("producer closed"), "send failed");
    Outcome missing =
        SendErrors.classify(
            new ExecutionException(
                new TimeoutException("Topic payments not present in metadata after 1000 ms.")),
            t);
    assertThat(missing.type()).isEqualTo(Outcome.Type.RETRY);
    assertThat(missing.error()).contains("topic 'payments'").contains("auto.create.topics.enable");
    assertThat(SendErrors.isTopicWide(new UnknownTopicOrPartitionException("x"))).isTrue();
    assertThat(SendErrors.isTopicWide(new TimeoutException("Expiring 1 record(s)"))).isFalse();
  }

  private static void assertPermanent(Exception e, String text) {
    Outcome o = SendErrors.classify(e, "payments");
    assertThat(o.type()).as(e.toString()).isEqualTo(Outcome.Type.PERMANENT);
    assertThat(o.error()).contains(text).contains("payments").contains(e.getClass().getName());
  }

  private static void assertRetry(Exception e, String text) {
    Outcome o = SendErrors.classify(e, "payments");
    assertThat(o.type()).as(e.toString()).isEqualTo(Outcome.Type.RETRY);
    assertThat(o.error()).contains(text).contains("payments");
  }

  private static ProducerSettings settings(Map<String, Object> extra) {
    Map<String, Object> p = new java.util.HashMap<>(BOOTSTRAP);
    p.putAll(extra);
    return ProducerSettings.of(p, null, null);
  }
}
