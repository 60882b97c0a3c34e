package io.localmessage.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.Backoff;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Seed 003's order -> points hop, end to end: orders saved with their tickets in business
 * transactions, three engines POSTing them to a points service (its own schema) that refuses 30% of
 * requests with 503 before applying and loses the answer of 10% after applying. Every order must
 * end with its points exactly once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractOrderToPointsTest {
  private static final int ORDERS = 5_000;
  private static final int ENGINES = 3;
  private static final int PRODUCERS = 4;
  private static final String TYPE = "points.award";

  private TestDatabase orderDb;
  private TestDatabase pointsDb;

  protected abstract TestDatabase.Kind kind();

  @BeforeAll
  void createDatabases() {
    orderDb = TestDatabase.create(kind());
    pointsDb = TestDatabase.create(kind());
  }

  @AfterAll
  void dropDatabases() {
    orderDb.close();
    pointsDb.close();
  }

  private static int pointsFor(long orderId) {
    return (int) (orderId % 97) + 1;
  }

  @Test
  void everyOrderGetsItsPointsExactlyOnce() throws Exception {
    DataSource orders = orderDb.dataSource(12);
    PointsService points = new PointsService(pointsDb, pointsDb.dataSource(12));
    Sql.update(
        orders,
        "CREATE TABLE orders (id BIGINT PRIMARY KEY, customer VARCHAR(64) NOT NULL,"
            + " amount_cents BIGINT NOT NULL)");

    FaultyEndpoint faulty = new FaultyEndpoint(points.endpoint(), 20240611L, 30, 10);
    long started = System.nanoTime();
    try (LocalHttpServer server = LocalHttpServer.start(12);
        EngineFixture fx = new EngineFixture(orders);
        HttpDelivery http =
            HttpDelivery.builder()
                .urlResolver(UrlResolver.named(Map.of("points", server.uri("/points"))))
                .header("Authorization", "Bearer order-service-token")
                .requestTimeout(Duration.ofSeconds(2))
                .build()) {
      server.context("/points", faulty);
      List<LocalMessages> engines = new ArrayList<>();
      for (int i = 0; i < ENGINES; i++) {
        LocalMessages lm = fx.build(fx.builder().replicaId("order-svc-" + i).concurrency(8));
        lm.register(
            TYPE,
            http,
            http.handlerConfig()
                .maxAttempts(50)
                .backoff(
                    Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(500)).jitter(0.5))
                .build());
        lm.start();
        engines.add(lm);
      }

      saveOrders(engines);
      long savedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

      await("every ticket delivered")
          .atMost(Duration.ofMinutes(2))
          .pollInterval(Duration.ofMillis(250))
          .until(() -> fx.countAll() == 0);
      engines.forEach(LocalMessages::close);

      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      System.out.printf(
          "order->points %s: %d orders saved in %d ms, all delivered in %d ms; %d requests, %d refused before applying,"
              + " %d answers lost by closing, %d replaced by 503; endpoint answered %d applied,"
              + " %d duplicate, %d errors%n",
          kind(),
          ORDERS,
          savedMs,
          tookMs,
          faulty.requests.get(),
          faulty.refusedBefore.get(),
          faulty.closedAfter.get(),
          faulty.failedAfter.get(),
          faulty.applied.get(),
          faulty.duplicates.get(),
          faulty.errors.get());
    }

    assertThat(Sql.count(orders, "SELECT COUNT(*) FROM orders")).isEqualTo(ORDERS);
    Map<Long, Integer> awarded = awardsByOrder(points.ds);
    assertThat(awarded).as("every order has points").hasSize(ORDERS);
    assertThat(awarded.values()).as("no order has them twice").containsOnly(1);
    assertThat(points.rows()).isEqualTo(ORDERS);
    assertThat(awarded.keySet()).isEqualTo(orderIds(orders));
    long expectedSum = 0;
    for (long id = 1; id <= ORDERS; id++) {
      expectedSum += pointsFor(id);
    }
    assertThat(Sql.count(points.ds, "SELECT SUM(points) FROM points_entry")).isEqualTo(expectedSum);
    assertThat(points.inboxRows()).isEqualTo(ORDERS);

    // the faults really happened, and the inbox really had duplicates to stop
    assertThat(faulty.refusedBefore.get()).isGreaterThan(ORDERS / 5);
    assertThat(faulty.closedAfter.get()).isGreaterThan(ORDERS / 50);
    assertThat(faulty.failedAfter.get()).isGreaterThan(ORDERS / 50);
    assertThat(faulty.applied.get())
        .as("applied answers, lost ones included: one per order")
        .isEqualTo(ORDERS);
    // each lost answer was a duplicate itself or caused a later one
    assertThat(faulty.duplicates.get())
        .as("redeliveries the inbox turned away")
        .isGreaterThanOrEqualTo((faulty.closedAfter.get() + faulty.failedAfter.get()) / 2);
  }

  /** Each order and its ticket in one business transaction, from several threads at once. */
  private void saveOrders(List<LocalMessages> engines) throws Exception {
    AtomicInteger threads = new AtomicInteger();
    ExecutorService producers =
        Executors.newFixedThreadPool(
            PRODUCERS, r -> new Thread(r, "order-producer-" + threads.incrementAndGet()));
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int p = 0; p < PRODUCERS; p++) {
        int producer = p;
        LocalMessages lm = engines.get(p % engines.size());
        done.add(
            producers.submit(
                () -> {
                  for (long id = producer + 1; id <= ORDERS; id += PRODUCERS) {
                    long orderId = id;
                    lm.inTransaction(conn -> saveOrder(lm, conn, orderId));
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      producers.shutdownNow();
      producers.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static Object saveOrder(LocalMessages lm, Connection conn, long orderId)
      throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement("INSERT INTO orders (id, customer, amount_cents) VALUES (?, ?, ?)")) {
      ps.setLong(1, orderId);
      ps.setString(2, "customer-" + (orderId % 113));
      ps.setLong(3, pointsFor(orderId) * 100L);
      ps.executeUpdate();
    }
    return lm.save(
        conn,
        NewMessage.action(TYPE, "order-" + orderId)
            .aggregateId(Long.toString(orderId))
            .destination("points")
            .header("content-type", "application/json")
            .payload(PointsService.body(orderId, pointsFor(orderId)))
            .build());
  }

  private static Map<Long, Integer> awardsByOrder(DataSource ds) throws SQLException {
    Map<Long, Integer> m = new TreeMap<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT order_id FROM points_entry");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        m.merge(rs.getLong(1), 1, Integer::sum);
      }
    }
    return m;
  }

  private static java.util.Set<Long> orderIds(DataSource ds) throws SQLException {
    java.util.Set<Long> ids = new java.util.TreeSet<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT id FROM orders");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        ids.add(rs.getLong(1));
      }
    }
    return ids;
  }
}
