package io.localmessage.demo;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.Backoff;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.http.HttpDelivery;
import io.localmessage.http.IdempotentReceiver;
import io.localmessage.http.InvalidIdempotencyKeyException;
import io.localmessage.http.UrlResolver;
import io.localmessage.inbox.Inbox;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The order -> points hop over HTTP: an order and its {@code points.add} message in one
 * transaction; a worker POSTs it with the idempotency key; the points service applies it once
 * through its inbox. The points service refuses 20% of requests (503) and loses the answer of 5%
 * after committing.
 */
final class PointsScenario implements AutoCloseable {
  static final String TYPE = "points.add";

  final AtomicLong requests = new AtomicLong();
  final AtomicLong refused = new AtomicLong();
  final AtomicLong lostAnswers = new AtomicLong();
  final AtomicLong duplicates = new AtomicLong();
  private final HikariDataSource shop;
  private final HikariDataSource points;
  private final HttpServer server;
  private final ExecutorService executor;
  private final HttpDelivery delivery;
  private final LocalMessages engine;
  private final Inbox inbox;
  private final int orders;

  PointsScenario(Infra infra, int orders) throws Exception {
    this.orders = orders;
    this.shop = infra.pool(infra.depositUrl, "shop", 10);
    this.points = infra.pool(infra.ledgerUrl, "points", 10);
    LocalMessages.builder(shop)
        .table("shop_message")
        .inboxTable("shop_inbox")
        .autoCreateSchema(true)
        .build()
        .close();
    LocalMessages.builder(points)
        .table("points_message")
        .inboxTable("points_inbox")
        .autoCreateSchema(true)
        .build()
        .close();
    try (Connection c = shop.getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE TABLE IF NOT EXISTS shop_order (id VARCHAR(64) PRIMARY KEY,"
              + " amount BIGINT NOT NULL)");
    }
    try (Connection c = points.getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE TABLE IF NOT EXISTS points_award (order_id VARCHAR(64) NOT NULL,"
              + " points BIGINT NOT NULL)");
    }
    this.inbox = Inbox.create(points, "points_inbox", null);
    this.executor = Executors.newFixedThreadPool(8, DepositService.named("points-service"));
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
    server.setExecutor(executor);
    server.createContext("/points", this::award);
    server.start();
    URI url = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/points");
    this.delivery =
        HttpDelivery.builder()
            .urlResolver(UrlResolver.fixed(url))
            .requestTimeout(Duration.ofSeconds(3))
            .build();
    this.engine =
        LocalMessages.builder(shop)
            .table("shop_message")
            .inboxTable("shop_inbox")
            .replicaId("shop-1")
            .concurrency(16)
            .pollInterval(Duration.ofMillis(200))
            .build();
    engine.register(
        TYPE,
        delivery,
        delivery
            .handlerConfig()
            .maxAttempts(50)
            .backoff(Backoff.exponential(Duration.ofMillis(50), Duration.ofSeconds(1)))
            .build());
    engine.start();
  }

  private void award(HttpExchange ex) throws IOException {
    try (ex) {
      requests.incrementAndGet();
      ThreadLocalRandom r = ThreadLocalRandom.current();
      if (r.nextInt(100) < 20) {
        refused.incrementAndGet();
        ex.sendResponseHeaders(503, -1);
        return;
      }
      byte[] body = ex.getRequestBody().readAllBytes();
      String key = ex.getRequestHeaders().getFirst(IdempotentReceiver.HEADER);
      boolean applied;
      try {
        IdempotentReceiver.checkKey(key);
        // the library's transaction runner: committed only when the work returned, rolled back
        // on anything else (errors included), and a commit the database refused is an exception
        applied =
            inbox.applyOnceInTransaction(
                "points",
                key,
                conn -> {
                  var json = PaymentChannel.JSON.readTree(body);
                  try (PreparedStatement ps =
                      conn.prepareStatement(
                          "INSERT INTO points_award (order_id, points) VALUES (?, ?)")) {
                    ps.setString(1, json.get("orderId").asString());
                    ps.setLong(2, json.get("points").asLong());
                    ps.executeUpdate();
                  }
                });
      } catch (InvalidIdempotencyKeyException e) {
        ex.sendResponseHeaders(400, -1);
        return;
      } catch (RuntimeException e) {
        ex.sendResponseHeaders(500, -1);
        return;
      }
      if (!applied) {
        duplicates.incrementAndGet();
      }
      if (r.nextInt(100) < 5) {
        lostAnswers.incrementAndGet(); // applied and committed, but the answer never arrives
        return;
      }
      ex.sendResponseHeaders(200, -1);
    }
  }

  /** Saves the orders, each with its message in one transaction. */
  void placeOrders() {
    for (int i = 0; i < orders; i++) {
      String id = "order-" + i;
      long amount = 10 + i % 90;
      engine.inTransaction(
          c -> {
            try (PreparedStatement ps =
                c.prepareStatement("INSERT INTO shop_order (id, amount) VALUES (?, ?)")) {
              ps.setString(1, id);
              ps.setLong(2, amount);
              ps.executeUpdate();
            }
            return engine.save(
                c,
                NewMessage.action(TYPE, "points-" + id)
                    .aggregateId(id)
                    .payload("{\"orderId\":\"" + id + "\",\"points\":" + amount + "}")
                    .build());
          });
    }
  }

  /** Waits until every order has points, or the deadline passes. */
  boolean awaitDone(long deadlineNanos) throws Exception {
    while (System.nanoTime() - deadlineNanos < 0) {
      if (pendingTickets() == 0) {
        return true;
      }
      TimeUnit.MILLISECONDS.sleep(200); // progress wait in the demo, not a test
    }
    return false;
  }

  private long pendingTickets() throws Exception {
    return Reconciliation.count(shop, "SELECT COUNT(*) FROM shop_message WHERE status = 0");
  }

  /** orders, points rows, distinct orders with points, sum of order amounts, sum of points. */
  long[] books() throws Exception {
    long ordersCount = Reconciliation.count(shop, "SELECT COUNT(*) FROM shop_order");
    long amounts = Reconciliation.count(shop, "SELECT COALESCE(SUM(amount), 0) FROM shop_order");
    long rows = Reconciliation.count(points, "SELECT COUNT(*) FROM points_award");
    long distinct =
        Reconciliation.count(points, "SELECT COUNT(DISTINCT order_id) FROM points_award");
    long sum = Reconciliation.count(points, "SELECT COALESCE(SUM(points), 0) FROM points_award");
    return new long[] {ordersCount, rows, distinct, amounts, sum};
  }

  @Override
  public void close() {
    engine.close();
    delivery.close();
    server.stop(0);
    executor.shutdownNow();
  }
}
