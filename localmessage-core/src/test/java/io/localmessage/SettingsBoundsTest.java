package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.function.Consumer;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * Every setting of the builder and of {@link HandlerConfig} accepts exactly its documented range:
 * both ends are allowed, one step past either is refused with a message naming the setting, the
 * range and the value. The setters run before any connection is made.
 */
class SettingsBoundsTest {
  private static final Duration MS = Duration.ofMillis(1);

  private static LocalMessagesBuilder builder() {
    return LocalMessages.builder(new JdbcDataSource());
  }

  private static void durationRange(
      String name, Duration min, Duration max, Consumer<Duration> setter) {
    assertThatCode(() -> setter.accept(min)).doesNotThrowAnyException();
    assertThatCode(() -> setter.accept(max)).doesNotThrowAnyException();
    String message = name + " must be between " + min + " and " + max + ", was ";
    assertThatThrownBy(() -> setter.accept(min.minus(MS)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message + min.minus(MS));
    assertThatThrownBy(() -> setter.accept(max.plus(MS)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message + max.plus(MS));
    assertThatThrownBy(() -> setter.accept(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage(name);
  }

  private static void intRange(String name, int min, int max, Consumer<Integer> setter) {
    assertThatCode(() -> setter.accept(min)).doesNotThrowAnyException();
    assertThatCode(() -> setter.accept(max)).doesNotThrowAnyException();
    String message = name + " must be between " + min + " and " + max + ", was ";
    assertThatThrownBy(() -> setter.accept(min - 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message + (min - 1));
    assertThatThrownBy(() -> setter.accept(max + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message + (max + 1));
  }

  @Test
  void builderDurationsAcceptExactlyTheirRange() {
    LocalMessagesBuilder b = builder();
    durationRange("lease", Duration.ofMillis(100), Duration.ofHours(24), b::lease);
    durationRange("pollInterval", Duration.ofMillis(10), Duration.ofHours(1), b::pollInterval);
    durationRange(
        "writeBackMargin", Duration.ofMillis(50), Duration.ofMinutes(10), b::writeBackMargin);
    durationRange(
        "maintenanceInterval", Duration.ofMillis(10), Duration.ofHours(1), b::maintenanceInterval);
    durationRange(
        "maxExecutionTime", Duration.ofSeconds(1), Duration.ofHours(24), b::maxExecutionTime);
    durationRange("loopStuckAfter", Duration.ofMillis(100), Duration.ofHours(1), b::loopStuckAfter);
    assertThatCode(() -> b.shutdownTimeout(Duration.ZERO)).doesNotThrowAnyException();
    assertThatCode(() -> b.shutdownTimeout(Duration.ofMinutes(10))).doesNotThrowAnyException();
    assertThatThrownBy(() -> b.shutdownTimeout(Duration.ofMinutes(10).plus(MS)))
        .hasMessage("shutdownTimeout must be between PT0S and PT10M, was PT10M0.001S");
    assertThatThrownBy(() -> b.shutdownTimeout(Duration.ofMillis(-1)))
        .hasMessage("shutdownTimeout must be between PT0S and PT10M, was PT-0.001S");
  }

  @Test
  void builderCountsAcceptExactlyTheirRange() {
    LocalMessagesBuilder b = builder();
    intRange("concurrency", 1, LocalMessagesBuilder.MAX_CONCURRENCY, b::concurrency);
    intRange("maxPayloadBytes", 1, 64 * 1024 * 1024, b::maxPayloadBytes);
    intRange("purgeBatchSize", 1, 100_000, b::purgeBatchSize);
    intRange("writeBatchSize", 1, 5_000, b::writeBatchSize);
    intRange("defaultMaxAttempts", 1, 1000, b::defaultMaxAttempts);
  }

  @Test
  void theLeaseMustBeLongerThanTwiceTheMarginAndNoLongerThanTheExecutionCap() {
    assertThatThrownBy(
            () ->
                builder()
                    .lease(Duration.ofSeconds(2))
                    .writeBackMargin(Duration.ofSeconds(1))
                    .build())
        .as("exactly twice the margin is not enough")
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("lease PT2S must be longer than twice the write-back margin PT1S");
    assertThatThrownBy(() -> builder().table("lm_same").inboxTable("LM_SAME").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("table and inboxTable must differ, both are lm_same");
  }

  @Test
  void replicaIdAndTableNamesAreChecked() {
    assertThatCode(() -> builder().replicaId("r".repeat(64))).doesNotThrowAnyException();
    assertThatThrownBy(() -> builder().replicaId("r".repeat(65)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("replicaId");
    assertThatCode(() -> builder().table("app.lm_1").inboxTable("app.lm_inbox"))
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> builder().inboxTable("bad name"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("inboxTable 'bad name' is not a plain SQL identifier");
    assertThatThrownBy(() -> builder().table(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("table 'null' is not a plain SQL identifier");
  }

  @Test
  void handlerSettingsAcceptExactlyTheirRange() {
    HandlerConfig.Builder h = HandlerConfig.builder();
    intRange("maxAttempts", 1, 1000, h::maxAttempts);
    intRange("concurrency", 0, 10_000, h::concurrency);
    intRange("batchSize", 1, 10_000, h::batchSize);
    assertThatCode(() -> h.handlerTimeout(MS)).doesNotThrowAnyException();
    assertThatCode(() -> h.handlerTimeout(Duration.ofHours(1))).doesNotThrowAnyException();
    assertThatThrownBy(() -> h.handlerTimeout(Duration.ofHours(1).plus(MS)))
        .hasMessage("handlerTimeout must be positive and at most PT1H, was PT1H0.001S");
    assertThatThrownBy(() -> h.handlerTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("handlerTimeout must be positive and at most ");
    assertThatThrownBy(() -> h.handlerTimeout(MS.negated()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatCode(() -> h.maxAge(MS)).doesNotThrowAnyException();
    assertThatCode(() -> h.maxAge(null)).doesNotThrowAnyException();
    assertThatThrownBy(() -> h.maxAge(Duration.ZERO))
        .hasMessage("maxAge must be positive or null, was PT0S");
    assertThatThrownBy(() -> h.maxAge(MS.negated()))
        .hasMessage("maxAge must be positive or null, was PT-0.001S");
    assertThatCode(() -> h.retainSucceeded(Duration.ZERO)).doesNotThrowAnyException();
    assertThatThrownBy(() -> h.retainSucceeded(MS.negated()))
        .hasMessage("retainSucceeded must not be negative, was PT-0.001S");
  }

  @Test
  void aHandlerConfigKeepsWhatWasSet() {
    HandlerConfig c =
        HandlerConfig.builder()
            .maxAttempts(7)
            .concurrency(3)
            .handlerTimeout(Duration.ofSeconds(9))
            .maxAge(Duration.ofHours(2))
            .ordered(true)
            .retainSucceeded(Duration.ofDays(1))
            .batchSize(50)
            .retryAfterCountsAttempt(true)
            .build();
    assertThat(c.maxAttempts()).isEqualTo(7);
    assertThat(c.concurrency()).isEqualTo(3);
    assertThat(c.handlerTimeout()).isEqualTo(Duration.ofSeconds(9));
    assertThat(c.maxAge()).isEqualTo(Duration.ofHours(2));
    assertThat(c.ordered()).isTrue();
    assertThat(c.retainSucceeded()).isEqualTo(Duration.ofDays(1));
    assertThat(c.batchSize()).isEqualTo(50);
    assertThat(c.retryAfterCountsAttempt()).isTrue();
  }

  @Test
  void handlerDefaultsAreTheDocumentedOnesAndTheConfigDescribesEverySetting() {
    HandlerConfig d = HandlerConfig.defaults();
    assertThat(d.maxAttempts()).isEqualTo(10);
    assertThat(d.concurrency()).as("only the engine total applies").isZero();
    assertThat(d.handlerTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.maxAge()).isNull();
    assertThat(d.ordered()).isFalse();
    assertThat(d.retainSucceeded()).isZero();
    assertThat(d.batchSize()).isEqualTo(100);
    assertThat(d.retryAfterCountsAttempt()).isFalse();
    assertThat(d.backoff()).isSameAs(HandlerConfig.DEFAULT_BACKOFF);
    assertThat(d)
        .hasToString(
            "HandlerConfig{maxAttempts=10, concurrency=0, backoff="
                + HandlerConfig.DEFAULT_BACKOFF
                + ", handlerTimeout=PT30S, maxAge=null, ordered=false, retainSucceeded=PT0S,"
                + " batchSize=100, retryAfterCountsAttempt=false}");
  }

  /**
   * Backoffs, ages and retention have the message delay's bound (100 years): past it the setting is
   * refused naming the limit, instead of overflowing when the engine adds it to a time.
   */
  @Test
  void backoffsAgesAndRetentionPastOneHundredYearsAreRefusedNamingTheBound() {
    Duration tooLong = Duration.ofSeconds(Long.MAX_VALUE);
    String bound = " must be at most PT876000H (100 years), was " + tooLong;
    assertThatThrownBy(() -> Backoff.fixed(tooLong))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("fixed delay" + bound);
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(1), tooLong))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max backoff" + bound);
    assertThatThrownBy(() -> Backoff.schedule(Duration.ofSeconds(1), tooLong))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("schedule delay" + bound);
    assertThatThrownBy(() -> HandlerConfig.builder().maxAge(tooLong))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxAge" + bound);
    assertThatThrownBy(() -> HandlerConfig.builder().retainSucceeded(tooLong))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("retainSucceeded" + bound);
    assertThatCode(() -> Backoff.fixed(NewMessage.MAX_DELAY)).doesNotThrowAnyException();
    assertThatCode(() -> HandlerConfig.builder().maxAge(NewMessage.MAX_DELAY))
        .doesNotThrowAnyException();
  }
}
