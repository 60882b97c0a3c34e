package io.localmessage.http;

import static io.localmessage.http.LocalHttpServer.respond;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.Backoff;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.admin.MessageView;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link HttpDelivery} driving real tickets on a real database against a real local HTTP server:
 * each response class must leave the ticket in the expected state after one {@code runOnce()}.
 * Subclassed per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractHttpDeliveryTest {
  private static final String TYPE = "points.award";
  private static final String TOKEN = "s3cr3t-token-4f9a";

  /** Backoff of the tests: long and fixed, so "backoff applied" and "Retry-After" differ. */
  private static final Duration BACKOFF = Duration.ofMinutes(10);

  private TestDatabase db;
  private DataSource ds;
  private LocalHttpServer server;
  private EngineFixture fx;
  private HttpDelivery http;
  private final CountDownLatch release = new CountDownLatch(1);

  protected abstract TestDatabase createDatabase();

  /**
   * Whether the suite registers the delivery as an asynchronous handler (its non-blocking send).
   */
  protected boolean async() {
    return false;
  }

  private void register(LocalMessages lm, String type, HandlerConfig config) {
    if (async()) {
      lm.registerAsync(type, http, config);
    } else {
      lm.register(type, http, config);
    }
  }

  @BeforeAll
  void start() {
    db = createDatabase();
    ds = db.dataSource(6);
    server = LocalHttpServer.start(8);
  }

  @AfterAll
  void stop() {
    release.countDown();
    server.close();
    db.close();
  }

  @BeforeEach
  void fresh() {
    fx = new EngineFixture(ds);
    server.clear();
  }

  @AfterEach
  void cleanUp() {
    fx.close();
    if (http != null) {
      http.close();
      http = null;
    }
  }

  /** The usual delivery: 2 s request timeout (4 s handler timeout, within the 5 s test lease). */
  private HttpDeliveryBuilder delivery() {
    return HttpDelivery.builder()
        .requestTimeout(Duration.ofSeconds(2))
        .connectTimeout(Duration.ofSeconds(1))
        .header("Authorization", "Bearer " + TOKEN);
  }

  private LocalMessages engine(HttpDeliveryBuilder b) {
    http = b.build();
    LocalMessages lm = fx.build(fx.builder());
    // handlerConfig(): 4 s handler timeout, Retry-After counts as an attempt
    register(
        lm,
        TYPE,
        http.checkFits(
            http.handlerConfig().maxAttempts(5).backoff(Backoff.fixed(BACKOFF)).build()));
    return lm;
  }

  private long save(LocalMessages lm, String key, String destination) {
    return save(lm, NewMessage.action(TYPE, key).destination(destination));
  }

  private long save(LocalMessages lm, NewMessage.Builder b) {
    SaveResult r = fx.save(lm, b.payload("{\"orderId\":42,\"points\":7}").build());
    return r.id();
  }

  private MessageView ticket(LocalMessages lm, long id) {
    return lm.admin().get(id).orElseThrow();
  }

  private Duration untilDue(MessageView t) {
    return Duration.between(Sql.instantNow(db, ds), t.nextRetryAt());
  }

  @Test
  void anEndpointThatStopsAnsweringMidRunDoesNotStallTheOtherTypes() {
    AtomicInteger slowCalls = new AtomicInteger();
    AtomicInteger hanging = new AtomicInteger();
    AtomicInteger maxHanging = new AtomicInteger();
    CountDownLatch answerAgain = new CountDownLatch(1);
    server.respondWith(
        (ex, r) -> {
          if (ex.getRequestURI().getPath().equals("/slow") && slowCalls.incrementAndGet() > 5) {
            maxHanging.accumulateAndGet(hanging.incrementAndGet(), Math::max);
            try {
              answerAgain.await(20, TimeUnit.SECONDS); // stops answering
            } finally {
              hanging.decrementAndGet();
            }
          }
          respond(ex, 200, "");
        });
    // a request timeout longer than the test: the hung requests hold their slots throughout
    http = delivery().requestTimeout(Duration.ofSeconds(15)).build();
    LocalMessages lm = fx.build(fx.builder().concurrency(16));
    HandlerConfig perType =
        http.handlerConfig().concurrency(4).backoff(Backoff.fixed(BACKOFF)).build();
    register(lm, "slow.award", perType);
    register(lm, "fast.award", perType);
    for (int i = 0; i < 20; i++) {
      fx.save(
          lm,
          NewMessage.action("slow.award", "s" + i)
              .destination(server.uri("/slow").toString())
              .payload("{}")
              .build());
    }
    for (int i = 0; i < 100; i++) {
      fx.save(
          lm,
          NewMessage.action("fast.award", "f" + i)
              .destination(server.uri("/fast").toString())
              .payload("{}")
              .build());
    }
    try {
      lm.start();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> fx.count("biz_type = 'fast.award'") == 0 && hanging.get() == 4);
      assertThat(fx.count("biz_type = 'slow.award'")).as("slow messages left").isEqualTo(15);
      assertThat(maxHanging.get())
          .as("requests hanging at once: the type's concurrency")
          .isEqualTo(4);
    } finally {
      answerAgain.countDown();
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> fx.countAll() == 0);
  }

  // ------------------------------------------------------------ the status table

  enum Expect {
    DELETED,
    RETRIED,
    DEAD
  }

  static Stream<Arguments> statuses() {
    return Stream.of(
        Arguments.of(200, Expect.DELETED),
        Arguments.of(201, Expect.DELETED),
        Arguments.of(202, Expect.DELETED),
        Arguments.of(204, Expect.DELETED),
        Arguments.of(408, Expect.RETRIED),
        Arguments.of(425, Expect.RETRIED),
        Arguments.of(429, Expect.RETRIED),
        Arguments.of(500, Expect.RETRIED),
        Arguments.of(502, Expect.RETRIED),
        Arguments.of(503, Expect.RETRIED),
        Arguments.of(504, Expect.RETRIED),
        Arguments.of(400, Expect.DEAD),
        Arguments.of(401, Expect.DEAD),
        Arguments.of(403, Expect.DEAD),
        Arguments.of(404, Expect.DEAD),
        Arguments.of(409, Expect.DEAD),
        Arguments.of(422, Expect.DEAD),
        Arguments.of(301, Expect.DEAD),
        Arguments.of(302, Expect.DEAD),
        Arguments.of(501, Expect.DEAD));
  }

  @ParameterizedTest(name = "HTTP {0} -> {1}")
  @MethodSource("statuses")
  void eachStatusClassDrivesTheTicketTransition(int status, Expect expect) {
    server.respondWith(
        (ex, r) ->
            respond(
                ex,
                status,
                status >= 300 ? "{\"error\":\"refused with " + status + "\"}" : "{\"ok\":true}",
                "Location",
                "http://127.0.0.1:1/elsewhere?token=abc"));
    LocalMessages lm = engine(delivery());
    long id = save(lm, "order-" + status, server.uri("/points").toString());

    assertThat(lm.runOnce()).isEqualTo(1);

    assertThat(server.requests()).as("one request, redirects not followed").hasSize(1);
    switch (expect) {
      case DELETED -> assertThat(fx.countAll()).as("a success deletes the ticket").isZero();
      case RETRIED -> {
        MessageView t = ticket(lm, id);
        assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
        assertThat(t.attempts()).isEqualTo(1);
        assertThat(t.lastError())
            .startsWith("io.localmessage.http.HttpDeliveryException: HTTP " + status + " from POST")
            .contains("refused with " + status);
        assertThat(untilDue(t))
            .as("the type's backoff applies")
            .isBetween(BACKOFF.minusMinutes(1), BACKOFF.plusMinutes(1));
      }
      case DEAD -> {
        MessageView t = ticket(lm, id);
        assertThat(t.status()).isEqualTo(MessageStatus.DEAD);
        assertThat(t.attempts()).isEqualTo(1);
        assertThat(t.lastError())
            .startsWith("io.localmessage.PermanentFailure: HTTP " + status + " from POST http://")
            .contains("refused with " + status)
            .doesNotContain("token=abc");
      }
    }
  }

  /**
   * With redirects followed, a 301/302/303 turns the POST into a GET without its body: the 200 that
   * GET gets answers another request, and counted as delivered it deleted the message while the
   * effect never happened. Such an answer goes DEAD with what happened; a 307/308, which repeats
   * the POST with its body, is a delivery.
   */
  @ParameterizedTest(name = "HTTP {0} followed")
  @org.junit.jupiter.params.provider.ValueSource(ints = {301, 302, 303, 307, 308})
  void aFollowedRedirectCountsOnlyWhenItRepeatedThePost(int status) {
    server.respondWith(
        (ex, r) -> {
          if (r.path().startsWith("/points")) {
            respond(ex, status, "", "Location", server.uri("/moved").toString());
          } else {
            respond(ex, 200, "{\"ok\":true}");
          }
        });
    LocalMessages lm = engine(delivery().followRedirects(true));
    long id = save(lm, "order-" + status, server.uri("/points").toString());

    assertThat(lm.runOnce()).isEqualTo(1);

    assertThat(server.requests()).as("the POST and the redirected request").hasSize(2);
    LocalHttpServer.Request second = server.requests().get(1);
    if (second.method().equals("POST")) {
      assertThat(second.body()).as("the body sent again").isNotEmpty();
      assertThat(fx.countAll()).as("the repeated POST was delivered").isZero();
    } else {
      MessageView t = ticket(lm, id);
      assertThat(t.status()).as("a GET's answer is not a delivery").isEqualTo(MessageStatus.DEAD);
      assertThat(t.lastError())
          .startsWith("io.localmessage.PermanentFailure: HTTP " + status + " from POST http://")
          .contains("redirected")
          .contains(second.method());
    }
  }

  @Test
  void badRequestGoesDeadWithStatusAndCappedRedactedExcerpt() {
    String body =
        "{\"error\":\"invalid\",\"echo\":\"Bearer "
            + TOKEN
            + "\",\"password\":\"hunter2\",\"card\":\"4111111111111111\",\"pad\":\""
            + "x".repeat(5000)
            + "\"}";
    server.respondWith((ex, r) -> respond(ex, 400, body));
    LocalMessages lm = engine(delivery());
    long id = save(lm, "order-1", server.uri("/points").toString());

    assertThat(lm.runOnce()).isEqualTo(1);

    MessageView t = ticket(lm, id);
    assertThat(t.status()).isEqualTo(MessageStatus.DEAD);
    String prefix = "io.localmessage.PermanentFailure: HTTP 400 from POST " + server.uri("/points");
    assertThat(t.lastError())
        .startsWith(prefix + ": {\"error\":\"invalid\"")
        .contains("****")
        .doesNotContain(TOKEN)
        .doesNotContain("hunter2")
        .doesNotContain("4111111111111111")
        .endsWith("...");
    assertThat(t.lastError().length())
        .as("the excerpt is capped at 256 characters")
        .isEqualTo(prefix.length() + 2 + HttpDelivery.DEFAULT_EXCERPT_LENGTH + 3);
  }

  // ------------------------------------------------------------ Retry-After

  @Test
  void retryAfterInDeltaSecondsIsHonoured() {
    server.respondWith((ex, r) -> respond(ex, 503, "busy", "Retry-After", "120"));
    LocalMessages lm = engine(delivery());
    long id = save(lm, "order-1", server.uri("/points").toString());

    assertThat(lm.runOnce()).isEqualTo(1);

    MessageView t = ticket(lm, id);
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.attempts()).as("handlerConfig() counts a Retry-After as an attempt").isEqualTo(1);
    assertThat(t.lastError()).startsWith("HTTP 503 from POST").endsWith("(Retry-After: 120)");
    assertThat(untilDue(t)).isBetween(Duration.ofSeconds(115), Duration.ofSeconds(125));
  }

  @Test
  void retryAfterAsHttpDateIsHonoured() {
    String at =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(
            ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(300));
    server.respondWith((ex, r) -> respond(ex, 429, "slow down", "Retry-After", at));
    LocalMessages lm = engine(delivery());
    long id = save(lm, "order-1", server.uri("/points").toString());

    assertThat(lm.runOnce()).isEqualTo(1);

    MessageView t = ticket(lm, id);
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.lastError()).startsWith("HTTP 429 from POST").contains("Retry-After: " + at);
    assertThat(untilDue(t)).isBetween(Duration.ofSeconds(290), Duration.ofSeconds(305));
  }

  @Test
  void retryAfterThatIsUnusablePastOrTooLongFallsBackOrIsCapped() {
    String past =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(
            ZonedDateTime.now(ZoneOffset.UTC).minusMinutes(5));
    List<String> values = List.of("soon", past, "0", "86400");
    List<Duration> expected =
        List.of(BACKOFF, BACKOFF, BACKOFF, ResponseClassifier.DEFAULT_MAX_RETRY_AFTER);
    for (int i = 0; i < values.size(); i++) {
      String value = values.get(i);
      server.respondWith((ex, r) -> respond(ex, 503, "busy", "Retry-After", value));
      LocalMessages lm = engine(delivery());
      long id = save(lm, "order-" + i, server.uri("/points").toString());
      assertThat(lm.runOnce()).isEqualTo(1);
      MessageView t = ticket(lm, id);
      assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
      assertThat(untilDue(t))
          .as("Retry-After: %s", value)
          .isBetween(expected.get(i).minusMinutes(1), expected.get(i).plusMinutes(1));
      fx.close();
      http.close();
      fx = new EngineFixture(ds);
    }
  }

  // ------------------------------------------------------------ timeouts and I/O errors

  @Test
  void requestTimeoutIsRetriedBeforeTheHandlerTimeout() {
    server.respondWith(
        (ex, r) -> {
          // the service hangs until the test ends; the client must give up on its own
          release.await(10, TimeUnit.SECONDS);
          respond(ex, 200, "late");
        });
    LocalMessages lm =
        engine(
            delivery()
                .requestTimeout(Duration.ofMillis(300))
                .connectTimeout(Duration.ofMillis(200)));
    long id = save(lm, "order-1", server.uri("/points").toString());

    assertThat(lm.runOnce()).isEqualTo(1);

    MessageView t = ticket(lm, id);
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.attempts()).isEqualTo(1);
    assertThat(t.lastError())
        .startsWith("io.localmessage.http.HttpDeliveryException: POST " + server.uri("/points"))
        .contains("request timed out")
        .contains("java.net.http.HttpTimeoutException");
    assertThat(untilDue(t)).isBetween(BACKOFF.minusMinutes(1), BACKOFF.plusMinutes(1));
  }

  @Test
  void connectionRefusedIsRetried() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    LocalMessages lm = engine(delivery());
    long id = save(lm, "order-1", "http://127.0.0.1:" + closedPort + "/points");

    assertThat(lm.runOnce()).isEqualTo(1);

    MessageView t = ticket(lm, id);
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.lastError())
        .startsWith("io.localmessage.http.HttpDeliveryException: POST http://127.0.0.1:")
        .contains("ConnectException");
  }

  @Test
  void serverClosingTheConnectionWithoutAnswerIsRetried() {
    server.respondWith((ex, r) -> ex.close()); // no status line: the response is lost
    LocalMessages lm = engine(delivery());
    long id = save(lm, "order-1", server.uri("/points").toString());

    assertThat(lm.runOnce()).isEqualTo(1);

    MessageView t = ticket(lm, id);
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.lastError()).startsWith("io.localmessage.http.HttpDeliveryException: POST");
  }

  // ------------------------------------------------------------ the request itself

  @Test
  void sendsIdempotencyKeyContentTypeStaticAndForwardedHeadersButNoTicketCredentials() {
    LocalMessages lm = engine(delivery().forwardTicketHeaders("traceparent"));
    save(
        lm,
        NewMessage.action(TYPE, "order-42")
            .destination(server.uri("/points").toString())
            .header("content-type", "application/vnd.points+json")
            .header("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
            .header("Authorization", "Bearer from-the-ticket"));

    assertThat(lm.runOnce()).isEqualTo(1);

    assertThat(fx.countAll()).isZero();
    LocalHttpServer.Request r = server.requests().get(0);
    assertThat(r.method()).isEqualTo("POST");
    assertThat(r.path()).isEqualTo("/points");
    assertThat(r.header("Idempotency-Key")).isEqualTo("order-42");
    assertThat(r.headers().get("Idempotency-Key")).hasSize(1);
    assertThat(r.header("Content-Type")).isEqualTo("application/vnd.points+json");
    assertThat(r.headers().get("Authorization"))
        .as("credentials come from configuration only")
        .containsExactly("Bearer " + TOKEN);
    assertThat(r.header("traceparent")).startsWith("00-0af7651916cd43dd");
    assertThat(r.bodyText()).isEqualTo("{\"orderId\":42,\"points\":7}");
  }

  @Test
  void putWithDefaultContentTypeToANamedDestination() {
    LocalMessages lm =
        engine(
            delivery()
                .method("put")
                .urlResolver(UrlResolver.named(Map.of("points", server.uri("/api/points")))));
    save(lm, "order-7", "points/orders/7");

    assertThat(lm.runOnce()).isEqualTo(1);

    LocalHttpServer.Request r = server.requests().get(0);
    assertThat(r.method()).isEqualTo("PUT");
    assertThat(r.path()).isEqualTo("/api/points/orders/7");
    assertThat(r.header("Content-Type")).isEqualTo("application/json");
    assertThat(r.header("Idempotency-Key")).isEqualTo("order-7");
  }

  @Test
  void unknownOrUnusableDestinationGoesDeadWithoutARequest() {
    LocalMessages lm =
        engine(delivery().urlResolver(UrlResolver.named(Map.of("points", server.uri("/points")))));
    long unknown = save(lm, "order-1", "loyalty");
    long none = save(lm, NewMessage.action(TYPE, "order-2"));

    assertThat(lm.runOnce()).isEqualTo(2);

    assertThat(ticket(lm, unknown).status()).isEqualTo(MessageStatus.DEAD);
    assertThat(ticket(lm, unknown).lastError())
        .isEqualTo(
            "io.localmessage.PermanentFailure: no URL for the ticket: unknown destination"
                + " 'loyalty'; known: [points]");
    assertThat(ticket(lm, none).lastError()).contains("the ticket has no destination name");
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void oneSharedClientReusesItsConnection() {
    LocalMessages lm = engine(delivery());
    for (int i = 0; i < 5; i++) {
      save(lm, "order-" + i, server.uri("/points").toString());
      assertThat(lm.runOnce()).isEqualTo(1);
    }
    assertThat(server.requests()).hasSize(5);
    assertThat(server.requests().stream().map(r -> r.remote().getPort()).distinct())
        .as("five sequential deliveries over one kept-alive connection")
        .hasSize(1);
  }

  @Test
  void severalClientsTakeTheRequestsInTurnEachOverItsOwnConnection() {
    LocalMessages lm = engine(delivery().clients(3));
    for (int i = 0; i < 6; i++) {
      save(lm, "order-" + i, server.uri("/points").toString());
      assertThat(lm.runOnce()).isEqualTo(1);
    }
    assertThat(server.requests()).hasSize(6);
    java.util.Map<Integer, Long> perConnection =
        server.requests().stream()
            .collect(
                java.util.stream.Collectors.groupingBy(
                    r -> r.remote().getPort(), java.util.stream.Collectors.counting()));
    assertThat(perConnection.values())
        .as("six sequential deliveries, three clients in turn, each keeping its connection")
        .containsExactly(2L, 2L, 2L);
  }

  @Test
  void replaceableClassifierDecidesTheOutcome() {
    server.respondWith((ex, r) -> respond(ex, 409, "{\"error\":\"already awarded\"}"));
    ResponseClassifier conflictIsDone =
        (m, r) -> {
          if (r.status() != 409) {
            ResponseClassifier.standard().classify(m, r);
          }
        };
    LocalMessages lm = engine(delivery().classifier(conflictIsDone));
    save(lm, "order-1", server.uri("/points").toString());

    assertThat(lm.runOnce()).isEqualTo(1);

    assertThat(fx.countAll()).as("409 counted as done by the custom policy").isZero();
    assertThat(server.requests().get(0).body())
        .isEqualTo("{\"orderId\":42,\"points\":7}".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void nonHttpSchemesGoDeadWithoutARequest() {
    LocalMessages lm = engine(delivery().urlResolver(m -> URI.create("ftp://127.0.0.1/x")));
    long id = save(lm, "order-1", "anything");
    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(ticket(lm, id).status()).isEqualTo(MessageStatus.DEAD);
    assertThat(ticket(lm, id).lastError()).contains("URL scheme 'ftp' is not http or https");
  }

  /** The handler config the tests use must fit the fixture's 5 s lease. */
  @Test
  void handlerConfigFitsTheRequestTimeout() {
    http = delivery().build();
    HandlerConfig c = http.handlerConfig().build();
    assertThat(c.handlerTimeout()).isEqualTo(Duration.ofSeconds(4));
    assertThat(c.retryAfterCountsAttempt()).isTrue();
    assertThat(http.checkFits(c)).isSameAs(c);
  }
}
