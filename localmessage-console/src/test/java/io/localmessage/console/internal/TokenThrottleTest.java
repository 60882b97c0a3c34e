package io.localmessage.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class TokenThrottleTest {
  private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T00:00:00Z"));
  private final TokenThrottle throttle = new TokenThrottle(clock);

  @Test
  void aFewMistakesAreFreeThenTheWaitDoublesUpToItsCap() {
    for (int i = 0; i < TokenThrottle.FREE_FAILURES - 1; i++) {
      throttle.failed("10.0.0.1");
      assertThat(throttle.delayFor("10.0.0.1")).isZero();
    }
    throttle.failed("10.0.0.1");
    assertThat(throttle.delayFor("10.0.0.1")).isEqualTo(Duration.ofMillis(250));
    throttle.failed("10.0.0.1");
    assertThat(throttle.delayFor("10.0.0.1")).isEqualTo(Duration.ofMillis(500));
    for (int i = 0; i < 100; i++) {
      throttle.failed("10.0.0.1");
    }
    assertThat(throttle.delayFor("10.0.0.1")).isEqualTo(TokenThrottle.MAX);
    assertThat(throttle.delayFor("10.0.0.2")).as("per address").isZero();
  }

  @Test
  void failuresAreForgottenAfterAQuietPeriodOrTheRightToken() {
    for (int i = 0; i < 5; i++) {
      throttle.failed("10.0.0.1");
      throttle.failed("10.0.0.3");
    }
    clock.advance(TokenThrottle.FORGET.plusSeconds(1));
    assertThat(throttle.delayFor("10.0.0.1")).isZero();
    throttle.succeeded("10.0.0.3");
    assertThat(throttle.delayFor("10.0.0.3")).isZero();
  }

  @Test
  void memoryIsBounded() {
    for (int i = 0; i < TokenThrottle.MAX_ADDRESSES + 10; i++) {
      throttle.failed("addr-" + i);
    }
    // the oldest addresses were dropped, the newest are kept
    for (int i = 0; i < 5; i++) {
      throttle.failed("addr-" + (TokenThrottle.MAX_ADDRESSES + 9));
    }
    assertThat(throttle.delayFor("addr-" + (TokenThrottle.MAX_ADDRESSES + 9))).isPositive();
  }
}
