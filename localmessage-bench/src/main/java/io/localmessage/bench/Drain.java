package io.localmessage.bench;

import io.localmessage.LocalMessages;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/** Waiting for a backlog to drain, and what a drain measured. */
final class Drain {
  private Drain() {}

  /**
   * One drain: {@code handled} handler calls for {@code n} messages in {@code seconds}; {@code
   * commitsPer1k} is the database's committed transactions per 1,000 messages (PostgreSQL, else
   * NaN), the monitor's own queries subtracted; {@code retries} counts statements the floor had to
   * repeat after a deadlock.
   */
  record Result(long n, long handled, double seconds, double commitsPer1k, long retries) {
    Result(long n, long handled, double seconds, double commitsPer1k) {
      this(n, handled, seconds, commitsPer1k, 0);
    }

    double perSecond() {
      return n / seconds;
    }
  }

  /**
   * What a measurement observes around a drain besides the time (the io workload's threads, CPU and
   * heap): {@link #reset} before the system under test is built, {@link #started} right before its
   * start, {@link #tick} every few milliseconds while the drain is awaited (on the waiting thread,
   * so observing adds no thread), {@link #drained} once the table is empty, before anything closes.
   */
  interface Meter {
    Meter NONE = new Meter() {};

    default void reset() {}

    default void started() {}

    default void tick() {}

    default void drained() {}
  }

  /** How often {@link Meter#tick} runs while a drain is awaited. */
  static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** A generous bound for draining {@code n} messages on a slow, shared machine. */
  static Duration timeoutFor(long n) {
    return Duration.ofSeconds(60 + n / 200);
  }

  /**
   * Waits until {@code handled} reaches {@code n} (no database load while waiting), then until
   * {@code table} is empty, polling {@code COUNT(*)} on one connection. Returns how many count
   * queries it ran. Throws when {@code timeout} passes first.
   */
  static long awaitEmpty(LongAdder handled, long n, Scope scope, String table, Duration timeout)
      throws SQLException {
    return awaitEmpty(handled, n, scope, table, timeout, Meter.NONE);
  }

  /** {@link #awaitEmpty(LongAdder, long, Scope, String, Duration)}, ticking {@code meter}. */
  static long awaitEmpty(
      LongAdder handled, long n, Scope scope, String table, Duration timeout, Meter meter)
      throws SQLException {
    long deadline = System.nanoTime() + timeout.toNanos();
    long nextTick = System.nanoTime();
    while (handled.sum() < n) {
      if (System.nanoTime() - nextTick >= 0) {
        meter.tick();
        nextTick = System.nanoTime() + TICK_NANOS;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "drain of " + table + " timed out after " + timeout + ": handled " + handled.sum());
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
    long queries = 0;
    try (Connection c = scope.connect()) {
      while (true) {
        queries++;
        long left = Scope.count(c, table);
        meter.tick();
        if (left == 0) {
          return queries;
        }
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "drain of " + table + " timed out after " + timeout + ": " + left + " rows left");
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
      }
    }
  }

  /**
   * Starts {@code lm}, waits until it drained {@code n} messages of the scope's message table, then
   * closes it and the scope's pools; returns the seconds from start to an empty table.
   */
  static double timeOne(LocalMessages lm, LongAdder handled, long n, Scope scope)
      throws SQLException {
    try {
      long t0 = System.nanoTime();
      lm.start();
      awaitEmpty(handled, n, scope, Tickets.TABLE, timeoutFor(n));
      return (System.nanoTime() - t0) / 1e9;
    } finally {
      lm.close();
      scope.closePools();
    }
  }

  /** The bench database's commit counter after the backends that just closed have reported. */
  static long settledCommits(Scope scope) {
    if (!scope.isPostgres()) {
      return -1;
    }
    // a backend reports its counters when it exits; closed pools exit asynchronously
    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
    return scope.db.xactCommits();
  }

  static double commitsPer1k(long before, long after, long monitorQueries, long n) {
    if (before < 0 || after < 0) {
      return Double.NaN;
    }
    return (after - before - monitorQueries) * 1000.0 / n;
  }
}
