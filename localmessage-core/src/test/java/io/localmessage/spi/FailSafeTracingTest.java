package io.localmessage.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.spi.TracePropagation.Hop;
import io.localmessage.spi.TracePropagation.Scope;
import io.localmessage.spi.TracePropagation.Span;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the engine and the integrations rely on when they wrap an application's tracer: a tracer
 * that throws, returns nothing or is missing a class never fails a save, a handler or a hop; a
 * tracer that works is called exactly as without the wrapper.
 */
class FailSafeTracingTest {
  private static final Hop HOP = Hop.save("t.a", "k-1");

  /** Records every call; each step throws what {@code fail} names, or returns what it is given. */
  private static final class Recording implements TracePropagation {
    final List<String> calls = new ArrayList<>();
    final String fail;
    final boolean nullSpan;
    final boolean nullScope;

    Recording(String fail, boolean nullSpan, boolean nullScope) {
      this.fail = fail;
      this.nullSpan = nullSpan;
      this.nullScope = nullScope;
    }

    private void step(String name) {
      calls.add(name);
      if (name.startsWith(fail)) {
        if (name.startsWith("restore")) {
          throw new NoClassDefFoundError("io/tracing/Missing");
        }
        throw new IllegalStateException(name + " failed");
      }
    }

    private Span span(String from) {
      if (nullSpan) {
        return null;
      }
      return new Span() {
        @Override
        public Scope makeCurrent() {
          step("makeCurrent " + from);
          return nullScope ? null : () -> step("close " + from);
        }

        @Override
        public void end(String outcome, String error) {
          step("end " + from + " " + outcome + " " + error);
        }
      };
    }

    @Override
    public Span inject(Hop hop, Map<String, String> carrier) {
      step("inject " + hop.name());
      carrier.put("traceparent", "00-abc");
      return span("inject");
    }

    @Override
    public Span restore(Hop hop, Map<String, String> carrier) {
      step("restore " + hop.name() + " " + carrier.get("traceparent"));
      return span("restore");
    }

    @Override
    public String toString() {
      return "Recording";
    }
  }

  @Test
  void aWorkingTracerIsCalledAsWithoutTheWrapper() {
    Recording r = new Recording("nothing", false, false);
    TracePropagation t = TracePropagation.failSafe(r);
    Map<String, String> carrier = new HashMap<>();
    Span out = t.inject(HOP, carrier);
    try (Scope s = out.makeCurrent()) {
      assertThat(s).isNotSameAs(Scope.NOOP);
    }
    out.end("ok", null);
    Span in = t.restore(HOP, carrier);
    try (Scope s = in.makeCurrent()) {
      assertThat(carrier).containsEntry("traceparent", "00-abc");
    }
    in.end("error", "boom");
    assertThat(r.calls)
        .containsExactly(
            "inject localmessage.save",
            "makeCurrent inject",
            "close inject",
            "end inject ok null",
            "restore localmessage.save 00-abc",
            "makeCurrent restore",
            "close restore",
            "end restore error boom");
    assertThat(t).hasToString("FailSafe(Recording)");
  }

  @Test
  void aTracerThatThrowsAtAnyStepLeavesTheCallerASpanThatDoesNothing() {
    for (String step : List.of("inject", "restore")) {
      Recording r = new Recording(step, false, false);
      TracePropagation t = TracePropagation.failSafe(r);
      Span s =
          step.equals("inject") ? t.inject(HOP, new HashMap<>()) : t.restore(HOP, new HashMap<>());
      assertThat(s).as(step).isSameAs(Span.NOOP);
    }
    for (String step : List.of("makeCurrent", "close", "end")) {
      Recording r = new Recording(step, false, false);
      Span s = TracePropagation.failSafe(r).inject(HOP, new HashMap<>());
      assertThatCode(
              () -> {
                try (Scope scope = s.makeCurrent()) {
                  if (step.equals("makeCurrent")) {
                    assertThat(scope).isSameAs(Scope.NOOP);
                  }
                }
                s.end("ok", null);
              })
          .as(step)
          .doesNotThrowAnyException();
      assertThat(r.calls).as(step).contains("end inject ok null");
    }
  }

  @Test
  void aTracerThatReturnsNoSpanOrNoScopeGetsTheOnesThatDoNothing() {
    TracePropagation noSpan = TracePropagation.failSafe(new Recording("nothing", true, false));
    assertThat(noSpan.inject(HOP, new HashMap<>())).isSameAs(Span.NOOP);
    assertThat(noSpan.restore(HOP, new HashMap<>())).isSameAs(Span.NOOP);
    Recording r = new Recording("nothing", false, true);
    Span s = TracePropagation.failSafe(r).inject(HOP, new HashMap<>());
    assertThat(s.makeCurrent()).isSameAs(Scope.NOOP);
  }

  @Test
  void wrappingIsDoneOnceAndNotForTheTracerThatDoesNothing() {
    assertThat(TracePropagation.failSafe(TracePropagation.NONE)).isSameAs(TracePropagation.NONE);
    TracePropagation once = TracePropagation.failSafe(new Recording("nothing", false, false));
    assertThat(TracePropagation.failSafe(once)).isSameAs(once);
    assertThatThrownBy(() -> TracePropagation.failSafe(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("tracing");
    TracePropagation defaults = new TracePropagation() {};
    assertThat(TracePropagation.failSafe(defaults).inject(HOP, new HashMap<>()))
        .isSameAs(Span.NOOP);
    // an integration that calls a tracer directly ends the span it gets: never a null
    assertThat(defaults.inject(HOP, new HashMap<>())).isSameAs(Span.NOOP);
    assertThat(defaults.restore(HOP, Map.of())).isSameAs(Span.NOOP);
  }

  @Test
  void theFirstFailureOfATracerIsLoggedWithItsStepAndTheNextOnesWithinTheMinuteAreNot() {
    for (String step : List.of("inject", "restore", "makeCurrent", "close", "end")) {
      // a hop of its own per step, so the lines of this run are told apart from any other
      Hop hop = new Hop("test.failsafe." + step, Hop.Kind.MESSAGE, step, Map.of(), Map.of());
      TracePropagation t = TracePropagation.failSafe(new Recording(step, false, false));
      List<String> logged =
          loggedFailures(
              hop,
              () -> {
                for (int i = 0; i < 3; i++) {
                  Span s =
                      step.equals("restore")
                          ? t.restore(hop, new HashMap<>())
                          : t.inject(hop, new HashMap<>());
                  try (Scope scope = s.makeCurrent()) {
                    assertThat(scope).isNotNull();
                  }
                  s.end("ok", null);
                }
              });
      assertThat(logged).as(step).hasSize(1);
      assertThat(logged.get(0)).as(step).contains("step=" + step + " ");
    }
  }

  /**
   * The {@code tracing_failed} lines logged for {@code hop} while {@code calls} ran. slf4j-simple,
   * the tests' logger, writes to whatever {@code System.err} is at each call; what other threads
   * write meanwhile still reaches the real stream.
   */
  private static List<String> loggedFailures(Hop hop, Runnable calls) {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    OutputStream both =
        new OutputStream() {
          @Override
          public void write(int b) {
            captured.write(b);
            original.write(b);
          }

          @Override
          public void write(byte[] b, int off, int len) {
            captured.write(b, off, len);
            original.write(b, off, len);
          }
        };
    System.setErr(new PrintStream(both, true, StandardCharsets.UTF_8));
    try {
      calls.run();
    } finally {
      System.setErr(original);
    }
    return captured
        .toString(StandardCharsets.UTF_8)
        .lines()
        .filter(l -> l.contains("event=tracing_failed") && l.contains("hop=" + hop.name() + " "))
        .toList();
  }
}
