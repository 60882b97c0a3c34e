package io.localmessage.kafka;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.kafka.testing.CommitFaults;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A consumer process that dies the hard way right after its {@code --halt-after}th database commit:
 * the batch is committed in the database, its offsets are not committed to Kafka. Started by the
 * crash test in a JVM of its own; the JVM halts (no shutdown hooks, no close, sockets dropped by
 * the OS), as under kill -9.
 */
public final class CrashingConsumer {
  private CrashingConsumer() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (String arg : args) {
      a.put(arg.substring(2, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
    }
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(a.get("url"));
    hc.setUsername(a.get("user"));
    hc.setPassword(a.getOrDefault("password", ""));
    hc.setMaximumPoolSize(4);
    String table = a.get("table");
    try (HikariDataSource ds = new HikariDataSource(hc)) {
      CommitFaults faults =
          new CommitFaults(ds)
              .on(Integer.parseInt(a.get("halt-after")), CommitFaults.Fault.COMMIT_THEN_HALT);
      KafkaInboxConsumer consumer =
          KafkaInboxConsumer.builder(faults.dataSource(), a.get("name"))
              .consumerProperties(
                  Map.of(
                      "bootstrap.servers",
                      a.get("bootstrap"),
                      // the group forgets this member soon after it died
                      "session.timeout.ms",
                      "6000",
                      "heartbeat.interval.ms",
                      "1000"))
              .topics(a.get("topic"))
              .inboxTable(table + "_inbox")
              .deadTable(table + "_dead")
              .batchSize(Integer.parseInt(a.get("batch-size")))
              .concurrency(1) // one commit at a time: the halted one is the last
              .purgeInterval(Duration.ZERO)
              .handler(
                  (record, c) -> {
                    try (PreparedStatement ps =
                        c.prepareStatement(
                            "INSERT INTO " + table + "_ledger (event_id, amount) VALUES (?, 1)")) {
                      ps.setString(1, new String(record.key()));
                      ps.executeUpdate();
                    }
                  })
              .build()
              .start();
      System.out.println("READY");
      // the halt ends this process; if it never comes, the test closes stdin (and fails)
      while (System.in.read() >= 0) {
        // nothing to read: the test never writes
      }
      consumer.close();
      System.exit(3);
    }
  }
}
