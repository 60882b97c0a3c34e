package io.localmessage.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.TransactionRequiredException;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * {@link IdempotentReceiver} in the caller's transaction, and {@link IdempotentEndpoint} behind a
 * real HTTP server. Subclassed per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractIdempotentReceiverTest {
  private TestDatabase db;
  private PointsService points;
  private LocalHttpServer server;
  private ExecutorService clientThreads;
  private HttpClient client;

  protected abstract TestDatabase createDatabase();

  @BeforeAll
  void start() {
    db = createDatabase();
    points = new PointsService(db, db.dataSource(6));
    server = LocalHttpServer.start(4);
    server.context("/points", points.endpoint());
    server.context("/small", points.endpoint().withMaxBodyBytes(10));
    server.context("/swallowing", swallowing());
    server.context("/swallowing-grouped", swallowing().withGroupCommit(8, 2));
    clientThreads = Executors.newFixedThreadPool(2, r -> new Thread(r, "test-client"));
    client = HttpClient.newBuilder().executor(clientThreads).build();
  }

  @AfterAll
  void stop() {
    server.close();
    clientThreads.shutdownNow();
    db.close();
  }

  private IdempotentReceiver.Result receive(String key, String body) throws Exception {
    try (Connection c = points.ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        IdempotentReceiver.Result r =
            points.receiver.receive(
                c, key, PointsService.CONSUMER, conn -> points.award(conn, body.getBytes()));
        c.commit();
        return r;
      } catch (Exception e) {
        c.rollback();
        throw e;
      }
    }
  }

  private long inbox(String key) {
    return io.localmessage.testing.Sql.count(
        points.ds, "SELECT COUNT(*) FROM local_inbox WHERE message_id = ?", key);
  }

  private long pointsOf(long orderId) {
    return io.localmessage.testing.Sql.count(
        points.ds, "SELECT COUNT(*) FROM points_entry WHERE order_id = ?", orderId);
  }

  @Test
  void appliesOnceThenReportsDuplicates() throws Exception {
    assertThat(receive("rcv-1", PointsService.body(1001, 5)))
        .isEqualTo(IdempotentReceiver.Result.APPLIED);
    assertThat(receive("rcv-1", PointsService.body(1001, 5)))
        .isEqualTo(IdempotentReceiver.Result.DUPLICATE);
    assertThat(receive("rcv-1", PointsService.body(1001, 5)))
        .isEqualTo(IdempotentReceiver.Result.DUPLICATE);
    assertThat(pointsOf(1001)).isEqualTo(1);
    assertThat(inbox("rcv-1")).isEqualTo(1);
  }

  @Test
  void aFailedWorkRollsTheKeyBackSoTheNextDeliveryApplies() throws Exception {
    assertThatThrownBy(() -> receive("rcv-2", "boom")).hasMessage("points ledger unavailable");
    assertThat(inbox("rcv-2")).as("the key went with the rolled back transaction").isZero();
    assertThat(receive("rcv-2", PointsService.body(1002, 5)))
        .isEqualTo(IdempotentReceiver.Result.APPLIED);
    assertThat(pointsOf(1002)).isEqualTo(1);
  }

  @Test
  void missingBlankOrTooLongKeysAreRefusedAndNothingRuns() {
    int runs = points.workRuns.get();
    assertThatThrownBy(() -> receive(null, "x"))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage("missing Idempotency-Key header");
    assertThatThrownBy(() -> receive("  ", "x"))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage("Idempotency-Key header is blank");
    assertThatThrownBy(() -> receive("k".repeat(256), "x"))
        .isInstanceOf(InvalidIdempotencyKeyException.class)
        .hasMessage("Idempotency-Key is 256 characters, longer than the limit 255");
    assertThat(points.workRuns.get()).isEqualTo(runs);
  }

  @Test
  void anAutocommitConnectionIsRefused() throws Exception {
    try (Connection c = points.ds.getConnection()) {
      c.setAutoCommit(true);
      assertThatThrownBy(
              () -> points.receiver.receive(c, "rcv-3", PointsService.CONSUMER, conn -> {}))
          .isInstanceOf(TransactionRequiredException.class);
    }
    assertThat(inbox("rcv-3")).isZero();
  }

  @Test
  void receiveAllAppliesEachRequestOnItsOwnInOneTransaction() throws Exception {
    List<IdempotentReceiver.Request> batch =
        List.of(
            request("ra-1", PointsService.body(4001, 1)),
            request("ra-2", "boom"), // its work fails: rolled back alone
            request("ra-1", PointsService.body(4001, 1)), // the same key again
            request("ra-3", PointsService.body(4003, 1)),
            request(" ", PointsService.body(4004, 1)), // an unusable key
            request("ra-2", PointsService.body(4002, 1))); // after its failed try: applies
    List<IdempotentReceiver.Outcome> out;
    try (Connection c = points.ds.getConnection()) {
      c.setAutoCommit(false);
      out = points.receiver.receiveAll(c, PointsService.CONSUMER, batch);
      c.commit();
    }
    assertThat(out)
        .extracting(IdempotentReceiver.Outcome::result)
        .containsExactly(
            IdempotentReceiver.Result.APPLIED,
            null,
            IdempotentReceiver.Result.DUPLICATE,
            IdempotentReceiver.Result.APPLIED,
            null,
            IdempotentReceiver.Result.APPLIED);
    assertThat(out.get(1).failure()).hasMessage("points ledger unavailable");
    assertThat(out.get(4).failure()).isInstanceOf(InvalidIdempotencyKeyException.class);
    assertThat(pointsOf(4001)).isEqualTo(1);
    assertThat(pointsOf(4002)).isEqualTo(1);
    assertThat(pointsOf(4003)).isEqualTo(1);
    assertThat(pointsOf(4004)).isZero();
    assertThat(inbox("ra-1") + inbox("ra-2") + inbox("ra-3")).isEqualTo(3);

    // a batch whose transaction is rolled back leaves nothing: the next delivery applies
    try (Connection c = points.ds.getConnection()) {
      c.setAutoCommit(false);
      points.receiver.receiveAll(
          c, PointsService.CONSUMER, List.of(request("ra-5", PointsService.body(4005, 1))));
      c.rollback();
    }
    assertThat(inbox("ra-5")).isZero();
    assertThat(pointsOf(4005)).isZero();
  }

  private IdempotentReceiver.Request request(String key, String body) {
    return new IdempotentReceiver.Request(key, conn -> points.award(conn, body.getBytes()));
  }

  @Test
  void groupCommitSharesTransactionsAndAnswersEveryRequestAsAlone() throws Exception {
    groupCommit(1, 5000); // one transaction at a time: the others wait and join the next
    groupCommit(3, 6000); // three at once, leaders handing over
    IdempotentEndpoint plain = points.endpoint();
    assertThatThrownBy(() -> plain.withGroupCommit(1, 1))
        .hasMessage("maxRequests must be between 2 and 1000, was 1");
    assertThatThrownBy(() -> plain.withGroupCommit(2, 0))
        .hasMessage("maxGroups must be between 1 and 64, was 0");
  }

  /**
   * 300 concurrent requests for 200 orders from {@code base}; base+117 fails, base+123 is refused.
   */
  private void groupCommit(int maxGroups, int base) throws Exception {
    AtomicInteger commits = new AtomicInteger();
    IdempotentEndpoint grouped =
        IdempotentEndpoint.create(
                countingCommits(points.ds, commits),
                points.receiver,
                PointsService.CONSUMER,
                (c, body, headers) -> points.award(c, body))
            .withGroupCommit(50, maxGroups);
    ExecutorService senders = Executors.newFixedThreadPool(16, r -> new Thread(r, "gc-sender"));
    try (LocalHttpServer busy = LocalHttpServer.start(16)) {
      busy.context("/grouped", grouped);
      List<Future<HttpResponse<String>>> answers = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        int order = base + i % 200; // the last 100 repeat the keys of the first 100
        String body = i == 117 ? "boom" : i == 123 ? "reject" : PointsService.body(order, 1);
        String key = "gc-" + order;
        answers.add(senders.submit(() -> post(busy.uri("/grouped"), key, body)));
      }
      int applied = 0;
      int duplicates = 0;
      for (int i = 0; i < answers.size(); i++) {
        HttpResponse<String> r = answers.get(i).get(30, TimeUnit.SECONDS);
        if (i == 117) {
          assertThat(r.statusCode()).isEqualTo(500);
        } else if (i == 123) {
          assertThat(r.statusCode()).isEqualTo(422);
        } else {
          assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
          applied += r.body().contains("applied") ? 1 : 0;
          duplicates += r.body().contains("duplicate") ? 1 : 0;
        }
      }
      assertThat(applied).isEqualTo(198);
      assertThat(duplicates).isEqualTo(100);
      // how many share a transaction depends on timing here; GroupCommitTest pins the grouping
      assertThat(commits.get()).isPositive().isLessThanOrEqualTo(298);
    } finally {
      senders.shutdownNow();
    }
    for (int order = base; order < base + 200; order++) {
      assertThat(pointsOf(order))
          .as("order " + order)
          .isEqualTo(order == base + 117 || order == base + 123 ? 0 : 1);
    }
    assertThat(inbox("gc-" + (base + 117)) + inbox("gc-" + (base + 123))).isZero();
  }

  private HttpResponse<String> post(URI uri, String key, String body) throws Exception {
    return client.send(
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(20))
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The real data source, counting the commits of its connections. */
  private static DataSource countingCommits(DataSource target, AtomicInteger commits) {
    return (DataSource)
        Proxy.newProxyInstance(
            DataSource.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, m, args) -> {
              Object r = invoke(target, m, args);
              if (!(r instanceof Connection c)) {
                return r;
              }
              return Proxy.newProxyInstance(
                  Connection.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (p2, m2, a2) -> {
                    if (m2.getName().equals("commit")) {
                      commits.incrementAndGet();
                    }
                    return invoke(c, m2, a2);
                  });
            });
  }

  private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  // ------------------------------------------------------------ the endpoint

  private HttpResponse<String> post(String path, String key, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(server.uri(path))
            .timeout(Duration.ofSeconds(5))
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void endpointAnswers200ForAppliedAndDuplicate() throws Exception {
    HttpResponse<String> first = post("/points", "ep-1", PointsService.body(2001, 3));
    HttpResponse<String> second = post("/points", "ep-1", PointsService.body(2001, 3));
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).isEqualTo("{\"result\":\"applied\"}");
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(second.body()).isEqualTo("{\"result\":\"duplicate\"}");
    assertThat(pointsOf(2001)).isEqualTo(1);
  }

  @Test
  void endpointRefusesBadRequestsWithoutApplying() throws Exception {
    HttpResponse<String> noKey = post("/points", null, PointsService.body(2002, 3));
    assertThat(noKey.statusCode()).isEqualTo(400);
    assertThat(noKey.body()).isEqualTo("{\"error\":\"missing Idempotency-Key header\"}");

    HttpResponse<String> get =
        client.send(
            HttpRequest.newBuilder(server.uri("/points")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(get.headers().firstValue("Allow")).contains("POST, PUT");

    assertThat(post("/small", "ep-2", PointsService.body(2002, 3)).statusCode()).isEqualTo(413);
    assertThat(pointsOf(2002)).isZero();
    assertThat(inbox("ep-2")).isZero();
  }

  @Test
  void endpointRollsBackOnFailure422ForPermanent500ForTheRest() throws Exception {
    HttpResponse<String> rejected = post("/points", "ep-3", "reject");
    assertThat(rejected.statusCode()).isEqualTo(422);
    assertThat(rejected.body()).isEqualTo("{\"error\":\"order is not eligible for points\"}");
    assertThat(inbox("ep-3")).isZero();

    HttpResponse<String> failed = post("/points", "ep-4", "boom");
    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(failed.body()).isEqualTo("{\"error\":\"internal error\"}");
    assertThat(inbox("ep-4")).isZero();
    assertThat(post("/points", "ep-4", PointsService.body(2004, 1)).body())
        .isEqualTo("{\"result\":\"applied\"}");
  }

  /** Sender and receiver together; a ticket saved again with a used key is a duplicate there. */
  @Test
  void senderAndReceiverTogether() {
    DataSource senderDs = db.dataSource(4);
    try (EngineFixture fx = new EngineFixture(senderDs);
        HttpDelivery http =
            HttpDelivery.builder()
                .requestTimeout(Duration.ofSeconds(2))
                .urlResolver(UrlResolver.fixed(server.uri("/points")))
                .build()) {
      LocalMessages lm = fx.build(fx.builder());
      lm.register("points.award", http, http.handlerConfig().build());
      NewMessage award =
          NewMessage.action("points.award", "order-3001")
              .payload(PointsService.body(3001, 9))
              .build();
      fx.save(lm, award);
      assertThat(lm.runOnce()).isEqualTo(1);
      // the succeeded ticket is gone, so the same key can be saved again (DESIGN invariant 1);
      // the receiver's inbox is what keeps the effect single
      assertThat(fx.save(lm, award).duplicate()).isFalse();
      assertThat(lm.runOnce()).isEqualTo(1);
      assertThat(fx.countAll()).isZero();
    }
    assertThat(pointsOf(3001)).isEqualTo(1);
    assertThat(inbox("order-3001")).isEqualTo(1);
  }

  // ------------------------------------------------------- the transaction's one ending

  private static final String SWALLOW = "swallow";
  private static final String ERROR = "error";

  /**
   * An endpoint whose work awards the points and then: for {@link #SWALLOW}, a statement that
   * fails, its error caught (the "already booked" idiom without a savepoint); for {@link #ERROR},
   * an {@link OutOfMemoryError} (a decoder trusting a corrupt length) after the effect.
   */
  private IdempotentEndpoint swallowing() {
    IdempotentEndpoint.Work work =
        (c, body, headers) -> {
          String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
          String how = text.substring(0, text.indexOf(':'));
          points.award(c, text.substring(how.length() + 1).getBytes());
          if (how.equals(SWALLOW)) {
            try (var ps = c.prepareStatement("INSERT INTO no_such_table VALUES (1)")) {
              ps.executeUpdate();
            } catch (java.sql.SQLException caught) {
              // swallowed on purpose
            }
          } else if (how.equals(ERROR)) {
            throw new OutOfMemoryError("test: a decoder trusted a corrupt length");
          }
        };
    return IdempotentEndpoint.create(points.ds, points.receiver, PointsService.CONSUMER, work);
  }

  private boolean abortsOnAnyError() {
    return db.kind() == TestDatabase.Kind.POSTGRESQL;
  }

  @Test
  void anErrorTheWorkSwallowedIsNeverAnsweredAppliedForACommitThatDidNotHappen() throws Exception {
    for (String path : List.of("/swallowing", "/swallowing-grouped")) {
      long order = path.endsWith("grouped") ? 7002 : 7001;
      String key = "sw-" + order;
      HttpResponse<String> r = post(path, key, SWALLOW + ":" + PointsService.body(order, 5));
      if (abortsOnAnyError()) {
        // PostgreSQL would turn the commit into a rollback: the sender must try again
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(500);
        assertThat(pointsOf(order)).as(path).isZero();
        assertThat(inbox(key)).as(path).isZero();
        assertThat(post(path, key, "ok:" + PointsService.body(order, 5)).body())
            .as(path)
            .contains("applied");
      } else {
        // MariaDB undoes only the failed statement: the rest commits, as answered
        assertThat(r.body()).as(path).contains("applied");
      }
      assertThat(pointsOf(order)).as(path).isEqualTo(1);
      assertThat(inbox(key)).as(path).isEqualTo(1);
    }
  }

  @Test
  void anErrorInTheWorkRollsTheHalfDoneEffectBackAndTheRetryAppliesIt() throws Exception {
    for (String path : List.of("/swallowing", "/swallowing-grouped")) {
      long order = path.endsWith("grouped") ? 7012 : 7011;
      String key = "err-" + order;
      try {
        HttpResponse<String> r = post(path, key, ERROR + ":" + PointsService.body(order, 5));
        assertThat(r.statusCode()).as(path).isNotEqualTo(200);
      } catch (java.io.IOException connectionClosed) {
        // the server's handler died of the error: no answer is an answer the sender retries
      }
      assertThat(pointsOf(order)).as(path).isZero();
      assertThat(inbox(key)).as(path).isZero();
      assertThat(post(path, key, "ok:" + PointsService.body(order, 5)).body())
          .as(path)
          .contains("applied");
      assertThat(pointsOf(order)).as(path).isEqualTo(1);
    }
  }
}
