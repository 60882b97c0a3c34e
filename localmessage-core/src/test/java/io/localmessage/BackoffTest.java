package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

  @Test
  void exponentialDoublesUpToTheCapWithoutJitter() {
    Backoff b = Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(10)).jitter(0);
    assertThat(b.delayAfter(1)).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.delayAfter(2)).isEqualTo(Duration.ofSeconds(2));
    assertThat(b.delayAfter(4)).isEqualTo(Duration.ofSeconds(8));
    assertThat(b.delayAfter(5)).isEqualTo(Duration.ofSeconds(10));
    assertThat(b.delayAfter(500))
        .as("no overflow for large attempts")
        .isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void jitterSpreadsDelaysWithinTheRange() {
    Backoff b = Backoff.exponential(Duration.ofSeconds(8), Duration.ofMinutes(1)).jitter(0.5);
    long min = Long.MAX_VALUE;
    long max = 0;
    for (int i = 0; i < 2000; i++) {
      long d = b.delayAfter(1).toMillis();
      min = Math.min(min, d);
      max = Math.max(max, d);
    }
    assertThat(min).isBetween(4000L, 4500L);
    assertThat(max).isBetween(7500L, 8000L);
  }

  @Test
  void scheduleRepeatsItsLastDelay() {
    Backoff b =
        Backoff.schedule(Duration.ofMinutes(1), Duration.ofMinutes(5), Duration.ofMinutes(30));
    assertThat(b.delayAfter(1)).isEqualTo(Duration.ofMinutes(1));
    assertThat(b.delayAfter(3)).isEqualTo(Duration.ofMinutes(30));
    assertThat(b.delayAfter(9)).isEqualTo(Duration.ofMinutes(30));
  }

  @Test
  void badBoundsAreRejected() {
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(10), Duration.ofSeconds(1)))
        .hasMessage("max backoff PT1S is shorter than the initial backoff PT10S");
    assertThatThrownBy(
            () -> Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(2)).jitter(1.5))
        .hasMessage("jitter must be in [0, 1], was 1.5");
    assertThatThrownBy(() -> Backoff.fixed(Duration.ZERO))
        .hasMessage("fixed delay must be positive, was PT0S");
    assertThatThrownBy(Backoff::schedule).hasMessage("a backoff schedule needs at least one delay");
  }

  @Test
  void aMultiplierOtherThanTwoGrowsByItselfAndAttemptZeroCountsAsTheFirst() {
    Backoff b =
        Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(10)).multiplier(3).jitter(0);
    assertThat(b.delayAfter(0)).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.delayAfter(1)).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.delayAfter(2)).isEqualTo(Duration.ofSeconds(3));
    assertThat(b.delayAfter(3)).isEqualTo(Duration.ofSeconds(9));
    assertThat(b).hasToString("exponential(PT1S..PT10M, x3.0, jitter 0.0)");
    Backoff flat =
        Backoff.exponential(Duration.ofSeconds(2), Duration.ofSeconds(2)).multiplier(1).jitter(0);
    assertThat(flat.delayAfter(7)).as("max equal to initial is allowed").hasSeconds(2);
    assertThat(Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(2)).multiplier(100))
        .hasToString("exponential(PT1S..PT2S, x100.0, jitter 0.5)");
  }

  @Test
  void fullJitterStaysBetweenZeroAndTheCap() {
    Backoff b = Backoff.exponential(Duration.ofMillis(100), Duration.ofMillis(100)).jitter(1);
    long min = Long.MAX_VALUE;
    long max = 0;
    for (int i = 0; i < 5000; i++) {
      long d = b.delayAfter(3).toMillis();
      min = Math.min(min, d);
      max = Math.max(max, d);
    }
    assertThat(min).isBetween(0L, 10L);
    assertThat(max).as("never above the cap, and reaches it").isEqualTo(100L);
  }

  @Test
  void multiplierOutsideOneToAHundredAndNegativeOrMissingDelaysAreRejected() {
    Backoff.Exponential e = Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(2));
    assertThatThrownBy(() -> e.multiplier(0.99))
        .hasMessage("multiplier must be in [1, 100], was 0.99");
    assertThatThrownBy(() -> e.multiplier(100.01))
        .hasMessage("multiplier must be in [1, 100], was 100.01");
    assertThatThrownBy(() -> e.multiplier(Double.NaN))
        .hasMessage("multiplier must be in [1, 100], was NaN");
    assertThatThrownBy(() -> e.jitter(-0.01)).hasMessage("jitter must be in [0, 1], was -0.01");
    assertThatThrownBy(() -> e.jitter(1.01)).hasMessage("jitter must be in [0, 1], was 1.01");
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(-1), Duration.ofSeconds(2)))
        .hasMessage("initial backoff must be positive, was PT-1S");
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(1), Duration.ZERO))
        .hasMessage("max backoff must be positive, was PT0S");
    assertThatThrownBy(() -> Backoff.exponential(null, Duration.ofSeconds(2)))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("initial backoff");
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(1), null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("max backoff");
    assertThatThrownBy(() -> Backoff.schedule(Duration.ofMinutes(1), Duration.ofMillis(-5)))
        .hasMessage("schedule delay must be positive, was PT-0.005S");
    assertThatThrownBy(() -> Backoff.schedule(Duration.ofMinutes(1), null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void everyBackoffDescribesItselfForTheConsoleAndLogs() {
    assertThat(Backoff.fixed(Duration.ofSeconds(3))).hasToString("fixed(PT3S)");
    assertThat(Backoff.schedule(Duration.ofMinutes(1), Duration.ofMinutes(5)))
        .hasToString("schedule[PT1M, PT5M]");
  }
}
