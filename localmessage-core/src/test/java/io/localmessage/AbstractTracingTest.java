package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.internal.engine.Engines;
import io.localmessage.spi.EngineListener;
import io.localmessage.spi.TracePropagation;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestTracing;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * One trace from the request that saved a message to every execution of its handler, on a real
 * tracer (Micrometer Observation bridged to the OpenTelemetry SDK, spans exported in memory): a
 * retry and a takeover by another replica stay children of the save; the MDC is set while a handler
 * runs and cleared after; without tracing nothing is written.
 */
public abstract class AbstractTracingTest extends DatabaseTest {
  private TestTracing tracing;

  @BeforeEach
  void tracer() {
    tracing = new TestTracing("orders");
  }

  @AfterEach
  void closeTracer() {
    tracing.close();
  }

  private static AttributeKey<String> key(String name) {
    return AttributeKey.stringKey(name);
  }

  /** What one handler call saw of its trace and MDC. */
  record Seen(int attempt, String spanId, String traceId, Map<String, String> mdc) {}

  private static Seen seen(Message m) {
    var ctx = io.opentelemetry.api.trace.Span.current().getSpanContext();
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    return new Seen(m.attempt(), ctx.getSpanId(), ctx.getTraceId(), mdc == null ? Map.of() : mdc);
  }

  private LocalMessages engine(String replica, Handler handler) {
    LocalMessages lm =
        fx.build(
            fx.builder()
                .replicaId(replica)
                .tracing(TracePropagation.observation(tracing.registry)));
    lm.register("order.ship", handler, EngineFixture.config().maxAttempts(5).build());
    return lm;
  }

  private SaveResult saveInRequest(LocalMessages lm) {
    return tracing.inRequest(
        "POST /orders",
        () ->
            lm.inTransaction(
                c ->
                    lm.save(
                        c,
                        NewMessage.action("order.ship", "order-1")
                            .payload("{}")
                            .header("content-type", "application/json")
                            .build())));
  }

  @Test
  void everyAttemptOfTheHandlerIsAChildOfTheSaveInTheRequestsTrace() {
    List<Seen> calls = new CopyOnWriteArrayList<>();
    LocalMessages lm =
        engine(
            "r1",
            m -> {
              calls.add(seen(m));
              if (m.attempt() == 1) {
                throw new IOException("the warehouse timed out");
              }
            });
    lm.start();
    saveInRequest(lm);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> tracing.spans("handle order.ship").size() == 2);

    SpanData request = tracing.span("POST /orders");
    SpanData save = tracing.span("save order.ship");
    assertThat(save.getParentSpanId()).isEqualTo(request.getSpanId());
    assertThat(save.getTraceId()).isEqualTo(request.getTraceId());
    assertThat(save.getAttributes().get(key("biz_type"))).isEqualTo("order.ship");
    assertThat(save.getAttributes().get(key("outcome"))).isEqualTo("saved");

    List<SpanData> handles = tracing.spans("handle order.ship");
    for (SpanData h : handles) {
      assertThat(h.getTraceId()).isEqualTo(request.getTraceId());
      assertThat(h.getParentSpanId())
          .as("each attempt is a child of the save")
          .isEqualTo(save.getSpanId());
      assertThat(h.getKind()).isEqualTo(io.opentelemetry.api.trace.SpanKind.CONSUMER);
    }
    SpanData first = attempt(handles, "1");
    SpanData second = attempt(handles, "2");
    assertThat(first.getAttributes().get(key("outcome"))).isEqualTo("retry");
    assertThat(first.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(second.getAttributes().get(key("outcome"))).isEqualTo("success");
    assertThat(second.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);

    // the handler ran with its execution's span current, and the MDC naming the message
    assertThat(calls).hasSize(2);
    for (Seen s : calls) {
      SpanData h = attempt(handles, Integer.toString(s.attempt()));
      assertThat(s.spanId()).isEqualTo(h.getSpanId());
      assertThat(s.mdc())
          .containsEntry("trace_id", request.getTraceId())
          .containsEntry("biz_type", "order.ship")
          .containsEntry("idem_key", "order-1")
          .containsKey("message_id");
    }
  }

  @Test
  void aReplicaThatTakesTheMessageOverContinuesTheSameTrace() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    List<Seen> calls = new CopyOnWriteArrayList<>();
    LocalMessages a =
        engine(
            "replica-a",
            m -> {
              calls.add(seen(m));
              inside.countDown();
              never.await(10, TimeUnit.SECONDS); // replica a dies with the handler inside
            });
    a.start();
    saveInRequest(a);
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    Engines.halt(a); // kill -9: no write-back, the lease is not released
    fx.expireLeases(); // as if the lease had run out
    LocalMessages b = engine("replica-b", m -> calls.add(seen(m)));
    b.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> calls.size() == 2 && fx.countAll() == 0);
    never.countDown();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> tracing.spans("handle order.ship").size() == 2);

    SpanData save = tracing.span("save order.ship");
    List<SpanData> handles = tracing.spans("handle order.ship");
    for (SpanData h : handles) {
      assertThat(h.getTraceId()).isEqualTo(save.getTraceId());
      assertThat(h.getParentSpanId()).isEqualTo(save.getSpanId());
    }
    SpanData taken = attempt(handles, "2");
    assertThat(taken.getAttributes().get(key("outcome"))).isEqualTo("success");
    assertThat(calls.get(1).spanId()).isEqualTo(taken.getSpanId());
    assertThat(calls.get(1).mdc()).containsEntry("trace_id", save.getTraceId());
    // the crashed replica's execution never reported an outcome
    assertThat(attempt(handles, "1").getAttributes().get(key("outcome"))).isEqualTo("abandoned");
  }

  @Test
  void withoutTracingNoTraceHeaderIsWrittenEvenInsideATracedRequest() {
    LocalMessages plain = fx.build(fx.builder());
    saveInRequest(plain);
    String headers = Sql.string(ds, "SELECT headers FROM " + fx.table);
    assertThat(MessageHeaders.decode(headers))
        .containsEntry("content-type", "application/json")
        .doesNotContainKeys("traceparent", "tracestate", "baggage");
    assertThat(tracing.spans("save order.ship")).isEmpty();

    // a registry without a tracing handler writes nothing either
    fx.close();
    fx = new EngineFixture(ds);
    LocalMessages untraced =
        fx.build(fx.builder().tracing(TracePropagation.observation(ObservationRegistry.create())));
    saveInRequest(untraced);
    assertThat(MessageHeaders.decode(Sql.string(ds, "SELECT headers FROM " + fx.table)))
        .containsOnlyKeys("content-type");
  }

  @Test
  void theMdcNamesTheMessageWhileItsHandlerRunsAndIsClearedAfterOnEveryPath() {
    MDC.put("canary", "x");
    assertThat(MDC.get("canary")).as("the tests' slf4j binding keeps an MDC").isEqualTo("x");
    MDC.remove("canary");
    List<Map<String, String>> inside = new CopyOnWriteArrayList<>();
    List<Map<String, String>> after = new CopyOnWriteArrayList<>();
    EngineListener afterTheHandler =
        new EngineListener() {
          @Override
          public void delivered(
              String bizType,
              Result result,
              int attempt,
              Duration handlerTime,
              Duration sinceCreated) {
            // called on the worker thread once it has left the handler
            Map<String, String> m = MDC.getCopyOfContextMap();
            after.add(m == null ? Map.of() : m);
          }
        };
    LocalMessages lm =
        fx.build(
            fx.builder()
                .concurrency(1)
                .listener(afterTheHandler)
                .tracing(TracePropagation.observation(tracing.registry)));
    lm.register(
        "order.ship",
        m -> {
          Map<String, String> mdc = MDC.getCopyOfContextMap();
          inside.add(mdc == null ? Map.of() : mdc);
          switch (m.idemKey()) {
            case "fails" -> throw new IOException("down");
            case "errors" -> throw new AssertionError("an Error from the handler");
            case "dead" -> throw new PermanentFailure("no such order");
            default -> {}
          }
        },
        EngineFixture.config().maxAttempts(1).build());
    lm.start();
    for (String k : List.of("ok", "fails", "errors", "dead")) {
      saveInRequest(lm, k);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> after.size() == 4);
    assertThat(inside).hasSize(4);
    for (Map<String, String> m : inside) {
      assertThat(m).containsKeys("trace_id", "biz_type", "message_id", "idem_key");
    }
    for (Map<String, String> m : after) {
      assertThat(m).doesNotContainKeys("trace_id", "biz_type", "message_id", "idem_key");
    }
  }

  /**
   * A shutdown ends every span it cuts short, each saying how: a blocking handler interrupted by it
   * as {@code shutdown} (its attempt is given back), a pending stage it gave up on as {@code
   * abandoned}. A span left open would never be exported.
   */
  @Test
  void closeEndsTheSpansItCutsShortAsShutdownAndAbandoned() throws Exception {
    CountDownLatch inside = new CountDownLatch(2);
    CountDownLatch never = new CountDownLatch(1);
    LocalMessages lm =
        fx.build(
            fx.builder()
                .replicaId("closing")
                .shutdownTimeout(Duration.ofMillis(200))
                .tracing(TracePropagation.observation(tracing.registry)));
    lm.register(
        "order.ship",
        m -> {
          inside.countDown();
          never.await(); // leaves when the shutdown interrupts it
        },
        EngineFixture.config().build());
    lm.registerAsync(
        "order.notify",
        m -> {
          inside.countDown();
          return new java.util.concurrent.CompletableFuture<Void>();
        },
        EngineFixture.config().build());
    lm.start();
    saveInRequest(lm);
    tracing.inRequest(
        "POST /orders",
        () -> lm.inTransaction(c -> lm.save(c, NewMessage.action("order.notify", "n-1").build())));
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    lm.close();

    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                tracing.spans("handle order.ship").size() == 1
                    && tracing.spans("handle order.notify").size() == 1);
    SpanData interrupted = tracing.span("handle order.ship");
    assertThat(interrupted.getAttributes().get(key("outcome"))).isEqualTo("shutdown");
    assertThat(interrupted.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    SpanData givenUp = tracing.span("handle order.notify");
    assertThat(givenUp.getAttributes().get(key("outcome"))).isEqualTo("abandoned");
  }

  private void saveInRequest(LocalMessages lm, String key) {
    tracing.inRequest(
        "POST /orders",
        () -> lm.inTransaction(c -> lm.save(c, NewMessage.action("order.ship", key).build())));
  }

  private static SpanData attempt(List<SpanData> handles, String attempt) {
    return handles.stream()
        .filter(h -> attempt.equals(h.getAttributes().get(AttributeKey.stringKey("attempt"))))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no span of attempt " + attempt + ": " + handles));
  }
}
