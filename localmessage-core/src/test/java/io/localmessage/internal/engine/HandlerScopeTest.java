package io.localmessage.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.Outcome;
import io.localmessage.spi.TracePropagation;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** The scope a handler runs in: the MDC it sets is put back as it was, whatever was there. */
class HandlerScopeTest {

  @Test
  void leavingPutsBackWhatTheThreadHadBefore() {
    MDC.put("biz_type", "outer.type");
    MDC.put("request_id", "r-1");
    try {
      HandlerScope scope = HandlerScope.start(TracePropagation.NONE, "order.ship", List.of(), true);
      try (TracePropagation.Scope in = scope.enter()) {
        assertThat(MDC.get("biz_type")).isEqualTo("order.ship");
        assertThat(MDC.get("message_id")).isNull();
      }
      assertThat(MDC.get("biz_type")).isEqualTo("outer.type");
      assertThat(MDC.get("request_id")).isEqualTo("r-1");
      scope.end(List.of(Outcome.success()), Execution.Ending.NORMAL); // a batch: no span, no-op
    } finally {
      MDC.clear();
    }
  }

  @Test
  void theTraceIdComesFromTheW3cOrB3Headers() {
    assertThat(
            HandlerScope.traceId(
                Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")))
        .isEqualTo("0af7651916cd43dd8448eb211c80319c");
    assertThat(
            HandlerScope.traceId(
                Map.of("b3", "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1")))
        .isEqualTo("80f198ee56343ba864fe8b2a57d3eff7");
    assertThat(HandlerScope.traceId(Map.of("X-B3-TraceId", "463ac35c9f6413ad")))
        .isEqualTo("463ac35c9f6413ad");
    assertThat(HandlerScope.traceId(Map.of("traceparent", "garbage"))).isNull();
    assertThat(HandlerScope.traceId(Map.of())).isNull();
  }

  @Test
  void aTraceIdThatIsNotLowerCaseHexOfSixteenOrThirtyTwoDigitsIsNoTraceId() {
    // a log line with a made-up trace id would point at a trace that does not exist
    assertThat(HandlerScope.traceId(Map.of("b3", "463ac35c9f6413az-e457b5a2e4d86bd1-1"))).isNull();
    assertThat(HandlerScope.traceId(Map.of("b3", "463AC35C9F6413AD"))).isNull();
    assertThat(HandlerScope.traceId(Map.of("X-B3-TraceId", "463ac35c9f6413a"))).isNull();
    assertThat(
            HandlerScope.traceId(
                Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01")))
        .isNull();
  }
}
