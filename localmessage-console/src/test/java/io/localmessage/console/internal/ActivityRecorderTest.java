package io.localmessage.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.spi.EngineListener.Result;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ActivityRecorderTest {
  private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T10:00:30Z"));
  private final ActivityRecorder recorder = new ActivityRecorder(clock, 5);

  private void deliver(String type, Result result, int times) {
    for (int i = 0; i < times; i++) {
      recorder.delivered(type, result, 1, Duration.ZERO, Duration.ZERO);
    }
  }

  @Test
  void countsSuccessesAndFailuresPerMinuteAndType() {
    deliver("a", Result.SUCCESS, 3);
    deliver("a", Result.RETRY, 1);
    deliver("a", Result.TIMEOUT, 1);
    deliver("a", Result.PERMANENT, 1);
    deliver("a", Result.EXHAUSTED, 1);
    deliver("a", Result.RETRY_AFTER, 4); // "not yet" is neither
    deliver("b", Result.SUCCESS, 1);
    clock.advance(Duration.ofMinutes(2));
    deliver("a", Result.SUCCESS, 2);

    ActivityRecorder.Series a = recorder.series("a");
    assertThat(a.successes()).containsExactly(0, 0, 3, 0, 2);
    assertThat(a.failures()).containsExactly(0, 0, 4, 0, 0);
    assertThat(a.totalSuccesses()).isEqualTo(5);
    assertThat(a.totalFailures()).isEqualTo(4);
    assertThat(a.firstMinute())
        .isEqualTo(Instant.parse("2025-01-01T10:00:00Z").getEpochSecond() / 60 - 2);
    assertThat(recorder.series("b").successes()).containsExactly(0, 0, 1, 0, 0);
    assertThat(recorder.series("unknown").successes()).containsExactly(0, 0, 0, 0, 0);
  }

  @Test
  void oldMinutesFallOutOfTheWindowAndTheirSlotsAreReused() {
    deliver("a", Result.SUCCESS, 7);
    clock.advance(Duration.ofMinutes(4));
    assertThat(recorder.series("a").successes()).containsExactly(7, 0, 0, 0, 0);
    clock.advance(Duration.ofMinutes(1));
    assertThat(recorder.series("a").totalSuccesses()).isZero();
    deliver("a", Result.PERMANENT, 1); // same ring slot as the first minute
    assertThat(recorder.series("a").successes()).containsExactly(0, 0, 0, 0, 0);
    assertThat(recorder.series("a").failures()).containsExactly(0, 0, 0, 0, 1);
  }

  @Test
  void theChartDescribesItself() {
    deliver("a", Result.SUCCESS, 2);
    deliver("a", Result.PERMANENT, 1);
    Html h = new Html();
    Chart.render(h, recorder.series("a"), 4, 28);
    assertThat(h.toString())
        .startsWith("<svg class=\"chart\"")
        .contains("aria-label=\"last 5 minutes: 2 succeeded, 1 failed\"")
        .contains("<title>10:00Z: 2 succeeded, 1 failed</title>")
        .contains("class=\"ok\"")
        .contains("class=\"bad\"")
        .endsWith("</svg>");
  }
}
