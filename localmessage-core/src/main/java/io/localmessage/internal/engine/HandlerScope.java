package io.localmessage.internal.engine;

import io.localmessage.Message;
import io.localmessage.Outcome;
import io.localmessage.spi.TracePropagation;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.MDC;

/**
 * What a handler runs inside, however it is called: the {@code localmessage.handle} span restored
 * from its message's headers (a child of the save, on whichever replica, at whichever attempt) and
 * the slf4j MDC keys {@value #TRACE_ID}, {@value #BIZ_TYPE}, {@value #MESSAGE_ID} and {@value
 * #IDEM_KEY}. A batch gets only {@value #BIZ_TYPE}: its messages come from different traces.
 *
 * <p>Two lifetimes: {@link #enter()} is the time on a thread (the span current, the MDC set; close
 * it on that thread, which restores both as they were), {@link #end} ends the span, on any thread,
 * once the outcome is known. Nothing here throws.
 */
final class HandlerScope {
  /** MDC key: the trace id of the message's trace, when its headers carry one. */
  static final String TRACE_ID = "trace_id";

  /** MDC key: the biz type being handled. */
  static final String BIZ_TYPE = "biz_type";

  /** MDC key: the id of the message being handled. */
  static final String MESSAGE_ID = "message_id";

  /** MDC key: the idempotency key of the message being handled. */
  static final String IDEM_KEY = "idem_key";

  private static final String[] KEYS = {TRACE_ID, BIZ_TYPE, MESSAGE_ID, IDEM_KEY};

  private final TracePropagation.Span span;
  private final String[] values;

  private HandlerScope(TracePropagation.Span span, String[] values) {
    this.span = span;
    this.values = values;
  }

  /**
   * Starts the span of one execution of {@code messages} of {@code bizType}; a {@code batch}
   * (whatever its size) gets no span: its handler restores each message itself if it hands them on.
   */
  static HandlerScope start(
      TracePropagation tracing, String bizType, List<? extends Message> messages, boolean batch) {
    if (batch || messages.size() != 1) {
      return new HandlerScope(TracePropagation.Span.NOOP, new String[] {null, bizType, null, null});
    }
    Message m = messages.get(0);
    Map<String, String> headers = m.headers();
    TracePropagation.Span span =
        tracing == TracePropagation.NONE
            ? TracePropagation.Span.NOOP
            : tracing.restore(TracePropagation.Hop.handle(m), headers);
    return new HandlerScope(
        span, new String[] {traceId(headers), bizType, Long.toString(m.id()), m.idemKey()});
  }

  /**
   * Makes the span current and sets the MDC on the calling thread; closing the returned scope, on
   * the same thread, puts back what was there before.
   */
  TracePropagation.Scope enter() {
    TracePropagation.Scope current = span.makeCurrent();
    String[] before = new String[KEYS.length];
    try {
      for (int i = 0; i < KEYS.length; i++) {
        before[i] = MDC.get(KEYS[i]);
        put(KEYS[i], values[i]);
      }
    } catch (RuntimeException e) {
      // an MDC adapter that fails must not stop the handler
    }
    return () -> {
      try {
        for (int i = 0; i < KEYS.length; i++) {
          put(KEYS[i], before[i]);
        }
      } catch (RuntimeException e) {
        // as above
      } finally {
        current.close();
      }
    };
  }

  /**
   * Ends the span with the outcome of a single message: {@code success}, {@code retry}, {@code
   * retry_after}, {@code permanent}, {@code timeout}, {@code shutdown} (interrupted by a shutdown,
   * attempt given back) or {@code abandoned} ({@code result} null: the engine gave up on it).
   */
  void end(List<Outcome> result, Execution.Ending ending) {
    if (span == TracePropagation.Span.NOOP) {
      return;
    }
    Outcome o = result == null || result.isEmpty() ? null : result.get(0);
    if (o == null || ending == null) {
      span.end("abandoned", null);
    } else if (ending.timedOut()) {
      span.end("timeout", "the handler ran past its timeout");
    } else if (ending == Execution.Ending.SHUTDOWN && o.type() != Outcome.Type.SUCCESS) {
      span.end("shutdown", "interrupted by the shutdown; the attempt is given back");
    } else {
      span.end(o.type().name().toLowerCase(Locale.ROOT), o.error());
    }
  }

  private static void put(String key, String value) {
    if (value == null) {
      MDC.remove(key);
    } else {
      MDC.put(key, value);
    }
  }

  /**
   * The trace id in {@code headers}: W3C {@code traceparent} ({@code 00-<trace id>-<span
   * id>-<flags>}), else B3 ({@code b3} single header or {@code X-B3-TraceId}); null without one.
   */
  static String traceId(Map<String, String> headers) {
    if (headers.isEmpty()) {
      return null;
    }
    String tp = headers.get("traceparent");
    if (tp != null && tp.length() >= 55 && tp.charAt(2) == '-' && tp.charAt(35) == '-') {
      return hexOrNull(tp.substring(3, 35));
    }
    String b3 = headers.get("b3");
    if (b3 != null) {
      int dash = b3.indexOf('-');
      return hexOrNull(dash < 0 ? b3 : b3.substring(0, dash));
    }
    String x = headers.get("X-B3-TraceId");
    return x == null ? null : hexOrNull(x);
  }

  private static String hexOrNull(String s) {
    if (s.length() != 16 && s.length() != 32) {
      return null;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if ((c < '0' || c > '9') && (c < 'a' || c > 'f')) {
        return null;
      }
    }
    return s;
  }
}
