package io.localmessage.internal.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.spi.TracePropagation;
import io.localmessage.spi.TracePropagation.Hop;
import io.localmessage.testing.TestTracing;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The spans a tracing backend draws for outgoing hops: a request is a client call, a message is
 * produced; a span made current parents the spans opened inside it; and a registry nothing observes
 * still hands out spans that can be used the same way.
 */
class ObservationTracingTest {

  private static Hop hop(String name, Hop.Kind kind) {
    return new Hop(name, kind, name, Map.of(), Map.of());
  }

  @Test
  void anOutgoingRequestIsAClientSpanAndAnOutgoingMessageAProducerSpan() {
    try (TestTracing tracing = new TestTracing("svc")) {
      TracePropagation propagation = TracePropagation.observation(tracing.registry);
      Map<String, String> requestHeaders = new HashMap<>();
      propagation.inject(hop("call", Hop.Kind.REQUEST), requestHeaders).end("success", null);
      Map<String, String> messageHeaders = new HashMap<>();
      propagation.inject(hop("send", Hop.Kind.MESSAGE), messageHeaders).end("success", null);

      assertThat(tracing.span("call").getKind()).isEqualTo(SpanKind.CLIENT);
      assertThat(tracing.span("send").getKind()).isEqualTo(SpanKind.PRODUCER);
      assertThat(requestHeaders).containsKey("traceparent");
      assertThat(messageHeaders).containsKey("traceparent");
    }
  }

  @Test
  void aSpanMadeCurrentParentsTheHopsOpenedInsideItsScope() {
    try (TestTracing tracing = new TestTracing("svc")) {
      TracePropagation propagation = TracePropagation.observation(tracing.registry);
      TracePropagation.Span outer = propagation.inject(hop("outer", Hop.Kind.MESSAGE), null);
      try (TracePropagation.Scope scope = outer.makeCurrent()) {
        propagation.inject(hop("inner", Hop.Kind.MESSAGE), new HashMap<>()).end("success", null);
      }
      propagation.inject(hop("after", Hop.Kind.MESSAGE), new HashMap<>()).end("success", null);
      outer.end("success", null);

      SpanData parent = tracing.span("outer");
      assertThat(tracing.span("inner").getParentSpanId()).isEqualTo(parent.getSpanId());
      assertThat(tracing.span("after").getTraceId())
          .as("the scope was closed: the next hop starts a trace of its own")
          .isNotEqualTo(parent.getTraceId());
    }
  }

  @Test
  void aRegistryWithoutHandlersHandsOutSpansThatCanBeUsedAsAnyOther() {
    TracePropagation propagation = TracePropagation.observation(ObservationRegistry.create());
    Map<String, String> headers = new HashMap<>();
    TracePropagation.Span span = propagation.inject(hop("send", Hop.Kind.MESSAGE), headers);
    assertThat(span).isNotNull();
    try (TracePropagation.Scope scope = span.makeCurrent()) {
      span.end("success", null);
    }
    assertThat(headers).as("nothing traces, nothing is written").isEmpty();
  }
}
