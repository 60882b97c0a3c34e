package io.localmessage.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.kafka.internal.EventIds;
import io.localmessage.kafka.internal.InboxSchema;
import io.localmessage.spi.Dialects;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** Builder checks, event ids and the shipped DDL; no broker needed. */
class InboxConsumerSettingsTest {

  @Test
  void theBuilderRefusesWhatWouldLoseOrStallRecords() {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.H2)) {
      DataSource ds = db.dataSource(2);
      KafkaInboxConsumer.Builder b =
          KafkaInboxConsumer.builder(ds, "ledger")
              .topics("t")
              .handler((r, c) -> {})
              .consumerProperties(Map.of("bootstrap.servers", "127.0.0.1:1"));
      assertThatThrownBy(() -> b.consumerProperties(Map.of("enable.auto.commit", "true")).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("enable.auto.commit=true");
      b.consumerProperties(Map.of("enable.auto.commit", "false"));
      assertThatThrownBy(() -> b.consumerProperties(Map.of("max.poll.interval.ms", "999")).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("max.poll.interval.ms must be at least 1000");
      b.consumerProperties(Map.of("max.poll.interval.ms", "300000"));
      assertThatThrownBy(() -> b.batchSize(0))
          .hasMessage("batchSize must be between 1 and 10000, was 0");
      assertThatThrownBy(() -> b.batchSize(10_001)).hasMessageContaining("was 10001");
      assertThatThrownBy(() -> b.batchTime(Duration.ZERO))
          .hasMessage("batchTime must be between PT0.001S and PT1M, was PT0S");
      assertThatThrownBy(() -> b.concurrency(0))
          .hasMessage("concurrency must be between 1 and 256, was 0");
      assertThatThrownBy(() -> b.concurrency(257)).hasMessageContaining("was 257");
      assertThatThrownBy(() -> KafkaInboxConsumer.builder(ds, "x".repeat(65)))
          .hasMessageContaining("1 to 64");
      assertThatThrownBy(() -> b.deadTable("no-dashes")).hasMessageContaining("deadTable");
      assertThatThrownBy(() -> b.backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
          .hasMessageContaining("shorter than");
      assertThatThrownBy(() -> KafkaInboxConsumer.builder(ds, "y").handler((r, c) -> {}).build())
          .hasMessageContaining("topics");
    }
  }

  @Test
  void theEventIdIsTheBizTypeAndIdempotencyKeyElseThePosition() {
    ConsumerRecord<byte[], byte[]> plain = new ConsumerRecord<>("t", 2, 41L, null, new byte[0]);
    assertThat(EventIds.of(plain)).isEqualTo("t-2-41");
    ConsumerRecord<byte[], byte[]> relayed = new ConsumerRecord<>("t", 0, 1L, null, new byte[0]);
    relayed.headers().add(RelayHeaders.EVENT_ID, utf8("dep-1"));
    assertThat(EventIds.of(relayed)).isEqualTo("dep-1");
    relayed.headers().add(RelayHeaders.BIZ_TYPE, utf8("deposit.paid"));
    assertThat(EventIds.of(relayed)).isEqualTo("deposit.paid:dep-1");
    ConsumerRecord<byte[], byte[]> longOne = new ConsumerRecord<>("t", 0, 1L, null, new byte[0]);
    longOne.headers().add(RelayHeaders.EVENT_ID, utf8("k".repeat(300)));
    assertThat(EventIds.of(longOne)).startsWith("sha256:").hasSize(7 + 64);
    relayed.headers().add(RelayHeaders.CREATED_AT, utf8("1700000000000"));
    assertThat(EventIds.createdAtMillis(relayed)).isEqualTo(1_700_000_000_000L);
    assertThat(EventIds.createdAtMillis(plain)).isEqualTo(-1);
  }

  @Test
  void theShippedDdlCreatesRenamedTablesOnEveryDialectAndIsIdempotent() {
    for (String dialect : List.of("postgresql", "mysql", "h2")) {
      List<String> ddl = InboxSchema.statements(Dialects.named(dialect), "app_inbox", "app_dead");
      assertThat(String.join("\n", ddl))
          .as(dialect)
          .contains("CREATE TABLE IF NOT EXISTS app_inbox (")
          .contains("CREATE TABLE IF NOT EXISTS app_dead (")
          .doesNotContain("local_inbox")
          .doesNotContain("local_message");
    }
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.H2)) {
      DataSource ds = db.dataSource(2);
      InboxSchema.create(ds, Dialects.named("h2"), "app_inbox", "app_dead");
      InboxSchema.create(ds, Dialects.named("h2"), "app_inbox", "app_dead");
      assertThat(Sql.count(ds, "SELECT COUNT(*) FROM app_inbox")).isZero();
      assertThat(Sql.count(ds, "SELECT COUNT(*) FROM app_dead")).isZero();
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
