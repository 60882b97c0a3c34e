package io.localmessage.console.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;

/**
 * Slows down guessing the console token: after {@value #FREE_FAILURES} wrong tokens from one client
 * address, every further attempt from it waits first, doubling from {@link #BASE} up to {@link
 * #MAX}. Failures are forgotten {@link #FORGET} after the last one, or at the first right token.
 * Memory is bounded ({@value #MAX_ADDRESSES} addresses, least recently failed dropped first) and so
 * are the threads held waiting ({@value #MAX_WAITING}; beyond that an attempt is refused at once).
 */
public final class TokenThrottle {
  static final int FREE_FAILURES = 3;
  static final Duration BASE = Duration.ofMillis(250);
  static final Duration MAX = Duration.ofSeconds(2);
  static final Duration FORGET = Duration.ofMinutes(15);
  static final int MAX_ADDRESSES = 10_000;
  static final int MAX_WAITING = 16;

  private record Failures(int count, Instant last) {}

  private final Clock clock;
  private final Semaphore waiting = new Semaphore(MAX_WAITING);
  private final Map<String, Failures> failures =
      new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Failures> eldest) {
          return size() > MAX_ADDRESSES;
        }
      };

  public TokenThrottle(Clock clock) {
    this.clock = clock;
  }

  /** How long an attempt from {@code address} waits before its token is checked. */
  public synchronized Duration delayFor(String address) {
    Failures f = current(address);
    int over = f == null ? 0 : f.count() - FREE_FAILURES + 1;
    if (over <= 0) {
      return Duration.ZERO;
    }
    Duration d = BASE.multipliedBy(1L << Math.min(over - 1, 16));
    return d.compareTo(MAX) > 0 ? MAX : d;
  }

  /** Records a wrong token; returns the failures counted for {@code address}. */
  public synchronized int failed(String address) {
    Failures f = current(address);
    int n = f == null ? 1 : f.count() + 1;
    failures.put(address, new Failures(n, clock.instant()));
    return n;
  }

  public synchronized void succeeded(String address) {
    failures.remove(address);
  }

  /**
   * Waits {@code delay} when a waiting slot is free; false when all are taken (the caller refuses
   * the attempt without checking it) or the thread was interrupted.
   */
  public boolean await(Duration delay) {
    if (delay.isZero()) {
      return true;
    }
    if (!waiting.tryAcquire()) {
      return false;
    }
    try {
      Thread.sleep(delay.toMillis());
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      waiting.release();
    }
  }

  private Failures current(String address) {
    Failures f = failures.get(address);
    if (f != null && f.last().plus(FORGET).isBefore(clock.instant())) {
      failures.remove(address);
      return null;
    }
    return f;
  }
}
