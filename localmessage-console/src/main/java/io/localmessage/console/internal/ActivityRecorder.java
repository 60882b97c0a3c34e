package io.localmessage.console.internal;

import io.localmessage.spi.EngineListener;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts this replica's deliveries per biz type and minute, for the overview chart. Installed in
 * the engine by a {@code LocalMessagesBuilderCustomizer}. Memory is bounded: {@code minutes}
 * counters per biz type seen. A "not yet" outcome ({@code RETRY_AFTER}) is neither success nor
 * failure: the handler asked to be polled again.
 */
public final class ActivityRecorder implements EngineListener {
  private final Clock clock;
  private final int minutes;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();
  private volatile boolean installed;

  public ActivityRecorder(Clock clock, int minutes) {
    if (minutes < 1) {
      throw new IllegalArgumentException("minutes must be positive, was " + minutes);
    }
    this.clock = clock;
    this.minutes = minutes;
  }

  /** Called by the customizer that hands this listener to the engine builder. */
  public void markInstalled() {
    installed = true;
  }

  /** False when the application built its own engine, so nothing is counted here. */
  public boolean installed() {
    return installed;
  }

  public int minutes() {
    return minutes;
  }

  @Override
  public void delivered(
      String bizType, Result result, int attempt, Duration handlerTime, Duration sinceCreated) {
    switch (result) {
      case SUCCESS -> window(bizType).add(minuteNow(), true);
      case RETRY, TIMEOUT, PERMANENT, EXHAUSTED -> window(bizType).add(minuteNow(), false);
      case RETRY_AFTER -> {}
    }
  }

  @Override
  public void expiredLastAttempt(int count) {
    // no biz type is known for these; they show up in the dead counts instead
  }

  /** The last {@link #minutes()} minutes of {@code bizType}, oldest first, current minute last. */
  public Series series(String bizType) {
    Window w = windows.get(bizType);
    long now = minuteNow();
    return w == null ? Series.empty(now, minutes) : w.snapshot(now);
  }

  private Window window(String bizType) {
    return windows.computeIfAbsent(bizType, t -> new Window(minutes));
  }

  private long minuteNow() {
    return Math.floorDiv(clock.millis(), 60_000L);
  }

  /**
   * Per-minute counts: {@code successes[i]} and {@code failures[i]} belong to epoch minute {@code
   * firstMinute + i}.
   */
  public record Series(long firstMinute, long[] successes, long[] failures) {
    static Series empty(long nowMinute, int minutes) {
      return new Series(nowMinute - minutes + 1, new long[minutes], new long[minutes]);
    }

    public long totalSuccesses() {
      long n = 0;
      for (long v : successes) {
        n += v;
      }
      return n;
    }

    public long totalFailures() {
      long n = 0;
      for (long v : failures) {
        n += v;
      }
      return n;
    }
  }

  /** A ring of per-minute counters; a slot is reset when a newer minute reuses it. */
  private static final class Window {
    private final long[] minuteOf;
    private final long[] ok;
    private final long[] failed;

    Window(int minutes) {
      minuteOf = new long[minutes];
      ok = new long[minutes];
      failed = new long[minutes];
      java.util.Arrays.fill(minuteOf, Long.MIN_VALUE);
    }

    synchronized void add(long minute, boolean success) {
      int i = (int) Math.floorMod(minute, (long) minuteOf.length);
      if (minuteOf[i] != minute) {
        minuteOf[i] = minute;
        ok[i] = 0;
        failed[i] = 0;
      }
      if (success) {
        ok[i]++;
      } else {
        failed[i]++;
      }
    }

    synchronized Series snapshot(long nowMinute) {
      int n = minuteOf.length;
      long first = nowMinute - n + 1;
      long[] s = new long[n];
      long[] f = new long[n];
      for (int k = 0; k < n; k++) {
        long minute = first + k;
        int i = (int) Math.floorMod(minute, (long) n);
        if (minuteOf[i] == minute) {
          s[k] = ok[i];
          f[k] = failed[i];
        }
      }
      return new Series(first, s, f);
    }
  }
}
