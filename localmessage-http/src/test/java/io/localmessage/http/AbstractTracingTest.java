package io.localmessage.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.Schema;
import io.localmessage.spi.TracePropagation;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import io.localmessage.testing.TestTracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * One trace over HTTP: the request that saved a message, the handler's execution, the delivery's
 * request, and the receiving endpoint in another service (its own database), each a child of the
 * one before; a retried delivery is a second request span under a second execution.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractTracingTest {
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

  private static String attr(SpanData s, String key) {
    return s.getAttributes().get(AttributeKey.stringKey(key));
  }

  @Test
  void theReceiversSpanIsAChildOfTheDeliveryRequestWhichIsAChildOfTheExecution() throws Exception {
    DataSource orders = orderDb.dataSource(4);
    DataSource points = pointsDb.dataSource(4);
    Schema.create(points, "local_message", "local_inbox");
    Sql.update(points, "CREATE TABLE award (order_id VARCHAR(64) NOT NULL)");
    try (TestTracing orderService = new TestTracing("orders");
        TestTracing pointsService = new TestTracing("points", orderService.exporter);
        EngineFixture fx = new EngineFixture(orders)) {
      List<String> currentInWork = new CopyOnWriteArrayList<>();
      java.util.concurrent.atomic.AtomicInteger calls =
          new java.util.concurrent.atomic.AtomicInteger();
      IdempotentEndpoint endpoint =
          IdempotentEndpoint.create(
                  points,
                  IdempotentReceiver.create(points),
                  "points",
                  (c, body, headers) -> {
                    currentInWork.add(
                        io.opentelemetry.api.trace.Span.current().getSpanContext().getSpanId());
                    if (calls.incrementAndGet() == 1) {
                      throw new IllegalStateException("the points ledger is locked");
                    }
                    try (var ps = c.prepareStatement("INSERT INTO award (order_id) VALUES (?)")) {
                      ps.setString(1, new String(body, java.nio.charset.StandardCharsets.UTF_8));
                      ps.executeUpdate();
                    }
                  })
              .withTracing(TracePropagation.observation(pointsService.registry));
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
      ExecutorService serverThreads = Executors.newFixedThreadPool(2);
      server.setExecutor(serverThreads);
      server.createContext("/points", endpoint);
      server.start();
      TracePropagation tracing = TracePropagation.observation(orderService.registry);
      try (HttpDelivery delivery =
          HttpDelivery.builder()
              .urlResolver(
                  UrlResolver.fixed(
                      URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/points")))
              .requestTimeout(Duration.ofSeconds(2))
              .tracing(tracing)
              .build()) {
        LocalMessages lm = fx.build(fx.builder().tracing(tracing));
        HandlerConfig config =
            delivery
                .handlerConfig()
                .maxAttempts(5)
                .backoff(io.localmessage.Backoff.fixed(Duration.ofMillis(10)))
                .build();
        lm.register(TYPE, delivery, config);
        lm.start();
        orderService.inRequest(
            "POST /orders",
            () ->
                lm.inTransaction(
                    c ->
                        lm.save(c, NewMessage.action(TYPE, "order-7").payload("order-7").build())));
        await()
            .atMost(Duration.ofSeconds(20))
            .until(
                () ->
                    Sql.count(points, "SELECT COUNT(*) FROM award") == 1
                        && orderService.spans("handle " + TYPE).size() == 2);
      } finally {
        server.stop(0);
        serverThreads.shutdownNow();
      }

      SpanData request = orderService.span("POST /orders");
      SpanData save = orderService.span("save " + TYPE);
      List<SpanData> handles = orderService.spans("handle " + TYPE);
      List<SpanData> sends = orderService.spans("POST");
      List<SpanData> receives = orderService.spans("receive points");
      assertThat(sends).hasSize(2);
      assertThat(receives).hasSize(2);
      for (SpanData h : handles) {
        assertThat(h.getParentSpanId()).isEqualTo(save.getSpanId());
      }
      for (SpanData send : sends) {
        assertThat(send.getKind()).isEqualTo(SpanKind.CLIENT);
        assertThat(handles.stream().map(SpanData::getSpanId)).contains(send.getParentSpanId());
        SpanData received =
            receives.stream()
                .filter(r -> r.getParentSpanId().equals(send.getSpanId()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no receive under " + send));
        assertThat(received.getKind()).isEqualTo(SpanKind.SERVER);
        assertThat(received.getTraceId()).isEqualTo(request.getTraceId());
        assertThat(received.getResource().getAttribute(AttributeKey.stringKey("service.name")))
            .isEqualTo("points");
      }
      assertThat(sends.stream().map(s -> attr(s, "outcome")))
          .containsExactlyInAnyOrder("500", "200");
      assertThat(receives.stream().map(s -> attr(s, "outcome")))
          .containsExactlyInAnyOrder("500", "applied");
      // the work ran with the receiving span current
      assertThat(receives.stream().map(SpanData::getSpanId)).containsAll(currentInWork);
      assertThat(currentInWork).hasSize(2);
    }
  }
}
