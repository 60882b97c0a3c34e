package io.localmessage.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.TransactionRequiredException;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
}
