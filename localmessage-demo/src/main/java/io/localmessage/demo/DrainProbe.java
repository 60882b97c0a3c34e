package io.localmessage.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A rough drain figure: a backlog of N no-op messages on PostgreSQL, one engine, messages/s until
 * empty. The benchmark module has the careful version; this is the quick look. Usage: {@code
 * DrainProbe <jdbc-url> <user> <n> <concurrency>}.
 */
public final class DrainProbe {
  private DrainProbe() {}

  public static void main(String[] args) throws Exception {
    String url = args.length > 0 ? args[0] : "jdbc:postgresql://127.0.0.1:5432/test";
    String user = args.length > 1 ? args[1] : "postgres";
    int n = args.length > 2 ? Integer.parseInt(args[2]) : 100_000;
    int concurrency = args.length > 3 ? Integer.parseInt(args[3]) : 64;
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(url);
    hc.setUsername(user);
    hc.setMaximumPoolSize(8);
    try (HikariDataSource ds = new HikariDataSource(hc)) {
      try (Connection c = ds.getConnection();
          Statement st = c.createStatement()) {
        st.execute(
            "DROP TABLE IF EXISTS drain_message, drain_message_control,"
                + " drain_message_audit, drain_inbox");
      }
      LocalMessages lm =
          LocalMessages.builder(ds)
              .table("drain_message")
              .inboxTable("drain_inbox")
              .autoCreateSchema(true)
              .concurrency(concurrency)
              .pollInterval(Duration.ofMillis(100))
              .build();
      AtomicLong done = new AtomicLong();
      lm.register("drain.noop", m -> done.incrementAndGet(), HandlerConfig.defaults());
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        for (int i = 0; i < n; i++) {
          lm.save(c, NewMessage.action("drain.noop", "k" + i).payload("x").build());
          if (i % 1000 == 999) {
            c.commit();
          }
        }
        c.commit();
      }
      try (Connection c = ds.getConnection();
          Statement st = c.createStatement()) {
        st.execute("ANALYZE drain_message");
      }
      long t0 = System.nanoTime();
      lm.start();
      while (done.get() < n) {
        Thread.sleep(20); // progress wait in a tool main
      }
      double s = (System.nanoTime() - t0) / 1e9;
      lm.close();
      System.out.printf(
          "drained %d no-op tickets in %.2f s: %.0f tickets/s (concurrency %d)%n",
          n, s, n / s, concurrency);
    }
  }
}
