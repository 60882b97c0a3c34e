package io.localmessage.spi;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link TracePropagation} whose failures never reach the caller: a save, a handler or a hop goes
 * on without its span, and the failure is logged at most once a minute.
 */
final class FailSafeTracing implements TracePropagation {
  private static final Logger log = LoggerFactory.getLogger(FailSafeTracing.class);
  private static final long LOG_EVERY_NANOS = 60_000_000_000L;

  private final TracePropagation target;
  private final AtomicLong lastLogged = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);

  FailSafeTracing(TracePropagation target) {
    this.target = target;
  }

  @Override
  public Span inject(Hop hop, Map<String, String> carrier) {
    try {
      return safe(target.inject(hop, carrier), hop);
    } catch (RuntimeException | LinkageError e) {
      failed("inject", hop, e);
      return Span.NOOP;
    }
  }

  @Override
  public Span restore(Hop hop, Map<String, String> carrier) {
    try {
      return safe(target.restore(hop, carrier), hop);
    } catch (RuntimeException | LinkageError e) {
      failed("restore", hop, e);
      return Span.NOOP;
    }
  }

  private Span safe(Span span, Hop hop) {
    if (span == null || span == Span.NOOP) {
      return Span.NOOP;
    }
    return new Span() {
      @Override
      public Scope makeCurrent() {
        try {
          Scope s = span.makeCurrent();
          return s == null ? Scope.NOOP : () -> close(s);
        } catch (RuntimeException | LinkageError e) {
          failed("makeCurrent", hop, e);
          return Scope.NOOP;
        }
      }

      private void close(Scope s) {
        try {
          s.close();
        } catch (RuntimeException | LinkageError e) {
          failed("close", hop, e);
        }
      }

      @Override
      public void end(String outcome, String error) {
        try {
          span.end(outcome, error);
        } catch (RuntimeException | LinkageError e) {
          failed("end", hop, e);
        }
      }
    };
  }

  private void failed(String what, Hop hop, Throwable e) {
    long now = System.nanoTime();
    long last = lastLogged.get();
    if (now - last >= LOG_EVERY_NANOS && lastLogged.compareAndSet(last, now)) {
      log.warn(
          "event=tracing_failed step={} hop={} error={} note=the hop goes on without its span;"
              + " logged at most once a minute",
          what,
          hop.name(),
          e.toString());
    }
  }

  @Override
  public String toString() {
    return "FailSafe(" + target + ")";
  }
}
