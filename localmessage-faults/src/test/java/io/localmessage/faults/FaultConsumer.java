package io.localmessage.faults;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.kafka.KafkaInboxConsumer;
import io.localmessage.spi.Dialects;
import java.io.InputStream;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The consumer process of the fault suite: applies each relayed event once into the effects
 * database through the inbox ({@code fx_event_effect}). Runs until killed or stdin closes.
 */
public final class FaultConsumer {
  static final String TOPIC = "fx-events";

  private FaultConsumer() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (String arg : args) {
      a.put(arg.substring(2, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
    }
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(a.get("fx-url"));
    hc.setUsername(a.get("fx-user"));
    hc.setPassword("");
    hc.setMaximumPoolSize(4);
    hc.setInitializationFailTimeout(-1);
    hc.setTransactionIsolation(FaultWorker.serverDefaultIsolation(a.get("fx-url"))); // see there
    try (HikariDataSource fx = new HikariDataSource(hc)) {
      KafkaInboxConsumer consumer =
          KafkaInboxConsumer.builder(fx, "events")
              .inboxTable("fx_inbox")
              .dialect(
                  Dialects.named(
                      a.get("fx-url").startsWith("jdbc:postgresql") ? "postgresql" : "mysql"))
              .consumerProperties(
                  Map.of(
                      "bootstrap.servers",
                      a.get("bootstrap"),
                      "group.id",
                      "fault-events",
                      "auto.offset.reset",
                      "earliest"))
              .topics(List.of(TOPIC))
              .maxAttempts(20)
              .backoff(Duration.ofMillis(100), Duration.ofSeconds(1))
              .handler(
                  (record, c) -> {
                    try (PreparedStatement ps =
                        c.prepareStatement("INSERT INTO fx_event_effect (event_key) VALUES (?)")) {
                      ps.setString(1, new String(record.key()));
                      ps.executeUpdate();
                    }
                  })
              .build();
      consumer.start();
      System.out.println("READY consumer");
      InputStream in = System.in;
      while (in.read() >= 0) {
        // the suite closes stdin to ask for a graceful stop
      }
      consumer.close();
    }
  }
}
