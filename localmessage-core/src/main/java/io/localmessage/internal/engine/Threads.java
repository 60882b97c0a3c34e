package io.localmessage.internal.engine;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Named daemon threads, bounded waits for pools, and listener calls that cannot throw. */
final class Threads {
  private static final Logger log = LoggerFactory.getLogger(Threads.class);

  private Threads() {}

  /** Daemon threads named {@code prefix-1}, {@code prefix-2}, ... */
  static ThreadFactory named(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** The time left until {@code deadline} (a reading of {@code ticker}), never negative. */
  static Duration left(Ticker ticker, long deadline) {
    return Duration.ofNanos(Math.max(0, deadline - ticker.nanos()));
  }

  /** Waits for {@code pool} to terminate, at most {@code timeout}; whether it did. */
  static boolean await(ExecutorService pool, Duration timeout) {
    try {
      return pool.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Runs a listener call; a listener that throws is logged and ignored. */
  static void safe(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      log.warn("event=listener_failed error={}", e.toString());
    }
  }

  /** The cause of a wrapped failure, which names what really went wrong. */
  static String describe(Throwable t) {
    return t.getCause() == null ? t.toString() : t.getCause().toString();
  }

  static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }
}
