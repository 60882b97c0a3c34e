package io.localmessage.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.Backoff;
import io.localmessage.HandlerConfig;
import io.localmessage.MessageKind;
import io.localmessage.MessageStatus;
import io.localmessage.Outcome;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.EngineListener.Result;
import io.localmessage.spi.ErrorRedactor;
import io.localmessage.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * {@code maxAge} at its exact edge, where the database suites cannot reach (their clocks are
 * milliseconds apart): a next try that falls exactly at the age limit is still made, one a
 * millisecond later is not. The age counts from the message's age start to the database clock of
 * the claim, plus the handler's time, plus the delay before the next try.
 */
class OutcomePolicyTest {
  private static final Instant SAVED = Instant.parse("2026-12-03T10:00:00Z");
  private static final Duration MAX_AGE = Duration.ofMinutes(30);
  private final OutcomePolicy policy = new OutcomePolicy(ErrorRedactor.NONE);

  @Test
  void aRetryWhoseNextTryFallsExactlyAtMaxAgeIsScheduledAndOneAMillisecondLaterGoesDead() {
    HandlerConfig config =
        HandlerConfig.builder()
            .maxAttempts(10)
            .backoff(Backoff.fixed(Duration.ofMinutes(5)))
            .maxAge(MAX_AGE)
            .build();
    // claimed 24 min after the save, the handler ran 1 min, the backoff is 5 min: 30 min exactly
    ClaimedRow row = claimedAt(Duration.ofMinutes(24));
    OutcomePolicy.Decision atEdge =
        policy.decide(config, row, Outcome.retry("busy"), false, Duration.ofMinutes(1));
    assertThat(atEdge.result()).isEqualTo(Result.RETRY);
    assertThat(transition(atEdge).status()).isEqualTo(MessageStatus.PENDING);
    assertThat(transition(atEdge).delayMillis()).isEqualTo(Duration.ofMinutes(5).toMillis());

    OutcomePolicy.Decision past =
        policy.decide(
            config, row, Outcome.retry("busy"), false, Duration.ofMinutes(1).plusMillis(1));
    assertThat(past.result()).isEqualTo(Result.EXHAUSTED);
    assertThat(transition(past).status()).isEqualTo(MessageStatus.DEAD);
    assertThat(past.error()).isEqualTo("max age PT30M passed: busy");
  }

  @Test
  void aNotYetWhoseNextTryFallsExactlyAtMaxAgeWaitsAndOneAMillisecondLaterGoesDead() {
    HandlerConfig config = HandlerConfig.builder().maxAttempts(10).maxAge(MAX_AGE).build();
    ClaimedRow row = claimedAt(Duration.ofMinutes(20));
    OutcomePolicy.Decision atEdge =
        policy.decide(
            config,
            row,
            Outcome.retryAfter(Duration.ofMinutes(9), "not settled"),
            false,
            Duration.ofMinutes(1));
    assertThat(atEdge.result()).isEqualTo(Result.RETRY_AFTER);
    assertThat(transition(atEdge).delayMillis()).isEqualTo(Duration.ofMinutes(9).toMillis());
    assertThat(transition(atEdge).attemptsDelta())
        .as("a not-yet gives its attempt back")
        .isEqualTo(-1);

    OutcomePolicy.Decision past =
        policy.decide(
            config,
            row,
            Outcome.retryAfter(Duration.ofMinutes(9).plusMillis(1), "not settled"),
            false,
            Duration.ofMinutes(1));
    assertThat(past.result()).isEqualTo(Result.EXHAUSTED);
    assertThat(transition(past).status()).isEqualTo(MessageStatus.DEAD);
  }

  private static ClaimedRow claimedAt(Duration afterSave) {
    return new ClaimedRow(
        7L,
        MessageKind.ACTION,
        "t.age",
        "k",
        null,
        null,
        new byte[0],
        null,
        1,
        10,
        3L,
        SAVED,
        SAVED.plus(afterSave),
        false,
        SAVED);
  }

  private static Transition transition(OutcomePolicy.Decision d) {
    return ((WriteBack.Update) d.writeBack()).transition();
  }
}
