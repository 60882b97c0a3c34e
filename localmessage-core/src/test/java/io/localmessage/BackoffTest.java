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
}
