package io.localmessage.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.Backoff;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.admin.TypeStats;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A small end-to-end run of the core on an embedded database (H2 by default; pass a JDBC URL as
 * {@code -Dexec.args="jdbc:postgresql://127.0.0.1:5432/test postgres"} for a real one): orders
 * saved with a {@code points.add} ticket in the same transaction, a flaky points handler, and a
 * reconciliation at the end showing every order got its points exactly once.
 */
public final class Quickstart {
  private Quickstart() {}

  public static void main(String[] args) throws Exception {
    String url = args.length > 0 ? args[0] : "jdbc:h2:mem:quickstart;DB_CLOSE_DELAY=-1";
    String user = args.length > 1 ? args[1] : "sa";
    int orders = Integer.getInteger("orders", 5_000);
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(url);
    hc.setUsername(user);
    hc.setMaximumPoolSize(10);
    try (HikariDataSource ds = new HikariDataSource(hc)) {
      try (var c = ds.getConnection();
          var st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS demo_order");
        st.execute("DROP TABLE IF EXISTS demo_points");
        st.execute("CREATE TABLE demo_order (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL)");
        st.execute("CREATE TABLE demo_points (order_id VARCHAR(64) PRIMARY KEY, points INT)");
      }
      Set<String> applied = ConcurrentHashMap.newKeySet();
      LocalMessages lm =
          LocalMessages.builder(ds)
              .table("demo_message")
              .inboxTable("demo_inbox")
              .autoCreateSchema(true)
              .concurrency(16)
              .lease(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(100))
              .build();
      lm.register(
          "points.add",
          m -> {
            // the points service: fails 30% of calls before applying, and is idempotent by order id
            if (ThreadLocalRandom.current().nextInt(100) < 30) {
              throw new java.io.IOException("points service unavailable (injected)");
            }
            if (applied.add(m.aggregateId())) {
              try (var c = ds.getConnection();
                  PreparedStatement ps =
                      c.prepareStatement(
                          "INSERT INTO demo_points (order_id, points) VALUES (?, ?)")) {
                ps.setString(1, m.aggregateId());
                ps.setInt(2, Integer.parseInt(new String(m.payload())));
                ps.executeUpdate();
              }
            }
          },
          HandlerConfig.builder()
              .maxAttempts(20)
              .handlerTimeout(Duration.ofSeconds(5))
              .backoff(Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(500)))
              .build());
      lm.start();

      long t0 = System.nanoTime();
      for (int i = 0; i < orders; i++) {
        String orderId = "order-" + i;
        int amount = 10 + i % 90;
        lm.inTransaction(
            c -> {
              try (PreparedStatement ps =
                  c.prepareStatement("INSERT INTO demo_order (id, amount) VALUES (?, ?)")) {
                ps.setString(1, orderId);
                ps.setInt(2, amount);
                ps.executeUpdate();
              }
              return lm.save(
                  c,
                  NewMessage.action("points.add", "points-" + orderId)
                      .aggregateId(orderId)
                      .payload(Integer.toString(amount))
                      .build());
            });
      }
      while (lm.admin().stats().stream().mapToLong(TypeStats::pending).sum() > 0) {
        Thread.sleep(100); // a progress wait in a demo main, not a test
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      lm.close();
      try (var c = ds.getConnection();
          var st = c.createStatement();
          var rs =
              st.executeQuery(
                  "SELECT (SELECT COUNT(*) FROM demo_order),"
                      + " (SELECT COUNT(*) FROM demo_points),"
                      + " (SELECT COUNT(*) FROM demo_order o WHERE NOT EXISTS"
                      + " (SELECT 1 FROM demo_points p WHERE p.order_id = o.id))")) {
        rs.next();
        System.out.printf(
            "orders=%d points_rows=%d missing=%d seconds=%.1f orders_per_s=%.0f%n",
            rs.getLong(1), rs.getLong(2), rs.getLong(3), seconds, orders / seconds);
        if (rs.getLong(1) != rs.getLong(2) || rs.getLong(3) != 0) {
          System.out.println("RECONCILIATION FAILED");
          System.exit(1);
        }
        System.out.println("reconciliation OK: every order got its points exactly once");
      }
    }
  }
}
