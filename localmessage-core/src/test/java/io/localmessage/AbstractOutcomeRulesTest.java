package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.admin.MessageView;
import io.localmessage.spi.EngineListener.Result;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The outcome rules of DESIGN section 3 at their edges: when attempts and {@code maxAge} run out
 * for retries and "not yet" outcomes, what a batch handler's missing outcomes become, and what an
 * error text looks like once stored. Driven by {@code runOnce()}; time moves by rewriting {@code
 * next_retry_at} and {@code created_at}.
 */
public abstract class AbstractOutcomeRulesTest extends DatabaseTest {
  private static NewMessage action(String type, String key) {
    return NewMessage.action(type, key).payload("p").build();
  }

  private MessageView view(LocalMessages lm, SaveResult s) {
    return lm.admin().get(s.id()).orElseThrow();
  }

  private Duration dueIn(MessageView t) {
    return Duration.between(Sql.instantNow(db, ds), t.nextRetryAt());
  }

  /** Moves the message's creation {@code ago} into the past, as if it had waited that long. */
  private void createdAgo(SaveResult s, Duration ago) {
    Sql.update(
        ds,
        "UPDATE "
            + fx.table
            + " SET created_at = "
            + dialect().plusMillis(dialect().now())
            + " WHERE id = ?",
        -ago.toMillis(),
        s.id());
  }

  private io.localmessage.spi.Dialect dialect() {
    try (java.sql.Connection c = ds.getConnection()) {
      return io.localmessage.spi.Dialects.detect(c);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static double counter(SimpleMeterRegistry r, String name, String type, String result) {
    var search = r.find(name).tag("biz_type", type);
    if (result != null) {
      search = search.tag("result", result);
    }
    var c = search.counter();
    return c == null ? 0 : c.count();
  }

  // ------------------------------------------------------------------ maxAge

  @Test
  void aRetryInsideMaxAgeIsScheduledWithTheBackoffAndOnePastItGoesDead() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = fx.build(fx.builder().listener(counting));
    lm.register(
        "t.a",
        m -> {
          throw new IllegalStateException("down");
        },
        EngineFixture.config()
            .maxAttempts(10)
            .maxAge(Duration.ofMinutes(30))
            .backoff(Backoff.fixed(Duration.ofMinutes(20)))
            .build());
    SaveResult s = fx.save(lm, action("t.a", "k"));

    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView first = view(lm, s);
    assertThat(first.status())
        .as("0 min old + 20 min backoff is inside a max age of 30 min")
        .isEqualTo(MessageStatus.PENDING);
    assertThat(first.lastError()).isEqualTo("java.lang.IllegalStateException: down");
    assertThat(dueIn(first)).isBetween(Duration.ofMinutes(19), Duration.ofMinutes(21));
    assertThat(counting.count(Result.RETRY)).isEqualTo(1);

    createdAgo(s, Duration.ofMinutes(15));
    fx.expireLeases();
    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView second = view(lm, s);
    assertThat(second.status())
        .as("15 min old + 20 min backoff passes the max age")
        .isEqualTo(MessageStatus.DEAD);
    assertThat(second.attempts()).isEqualTo(2);
    assertThat(second.lastError())
        .isEqualTo("max age PT30M passed: java.lang.IllegalStateException: down");
    assertThat(counting.count(Result.EXHAUSTED)).isEqualTo(1);
    assertThat(counting.count(Result.RETRY)).isEqualTo(1);
  }

  @Test
  void aNotYetInsideMaxAgeWaitsAndOnePastItGoesDead() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = fx.build(fx.builder().listener(counting));
    lm.register(
        "t.short",
        m -> {
          throw new RetryAfter(Duration.ofMinutes(1), "still settling");
        },
        EngineFixture.config().maxAge(Duration.ofMinutes(30)).build());
    lm.register(
        "t.long",
        m -> {
          throw new RetryAfter(Duration.ofHours(1), "settles tomorrow");
        },
        EngineFixture.config().maxAge(Duration.ofMinutes(30)).build());
    SaveResult inside = fx.save(lm, action("t.short", "k"));
    SaveResult past = fx.save(lm, action("t.long", "k"));

    assertThat(lm.runOnce()).isEqualTo(2);
    MessageView waiting = view(lm, inside);
    assertThat(waiting.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(waiting.attempts()).as("a not-yet does not count an attempt").isZero();
    assertThat(waiting.lastError()).isEqualTo("still settling");
    assertThat(dueIn(waiting)).isBetween(Duration.ofSeconds(50), Duration.ofSeconds(70));

    MessageView dead = view(lm, past);
    assertThat(dead.status())
        .as("a delay of 1 h would retry past the max age of 30 min")
        .isEqualTo(MessageStatus.DEAD);
    assertThat(dead.lastError()).isEqualTo("max age PT30M passed: settles tomorrow");
    assertThat(counting.count(Result.RETRY_AFTER)).isEqualTo(1);
    assertThat(counting.count(Result.EXHAUSTED)).isEqualTo(1);
  }

  // ------------------------------------------------------------------ counted "not yet"

  @Test
  void aNotYetThatCountsAnAttemptGoesDeadWhenTheAttemptsRunOut() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = fx.build(fx.builder().listener(counting));
    lm.register(
        "t.a",
        m -> {
          throw new RetryAfter(Duration.ofMinutes(10), "payment still processing");
        },
        EngineFixture.config().maxAttempts(2).retryAfterCountsAttempt(true).build());
    SaveResult s = fx.save(lm, action("t.a", "k"));

    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView first = view(lm, s);
    assertThat(first.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(first.attempts()).as("the attempt counted at claim is kept").isEqualTo(1);
    assertThat(first.lastError()).isEqualTo("payment still processing");
    assertThat(dueIn(first)).isBetween(Duration.ofMinutes(9), Duration.ofMinutes(11));

    fx.expireLeases();
    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView last = view(lm, s);
    assertThat(last.status()).isEqualTo(MessageStatus.DEAD);
    assertThat(last.attempts()).isEqualTo(2);
    assertThat(last.lastError()).isEqualTo("attempts exhausted (2/2): payment still processing");
    assertThat(counting.count(Result.RETRY_AFTER)).isEqualTo(1);
    assertThat(counting.count(Result.EXHAUSTED)).isEqualTo(1);
  }

  /**
   * A "not yet" for ever ({@code ChronoUnit.FOREVER}) is still a "not yet": the delay is capped at
   * {@link NewMessage#MAX_DELAY} and the message waits, PENDING with its reason, instead of the
   * outcome failing on its way to milliseconds and the message running again after the lease.
   */
  @Test
  void aNotYetForEverWaitsAsLongAsADelayCanBe() {
    LocalMessages lm = fx.build(fx.builder());
    lm.register(
        "t.a",
        m -> {
          throw new RetryAfter(java.time.temporal.ChronoUnit.FOREVER.getDuration(), "never yet");
        },
        EngineFixture.config().build());
    SaveResult s = fx.save(lm, action("t.a", "k"));

    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView t = view(lm, s);
    assertThat(t.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(t.lastError()).isEqualTo("never yet");
    assertThat(dueIn(t))
        .isBetween(NewMessage.MAX_DELAY.minusDays(1), NewMessage.MAX_DELAY.plusDays(1));
  }

  // ------------------------------------------------------------------ error texts

  @Test
  void anErrorTextIsKeptWholeUpToTheColumnSizeAndCutJustAfterIt() {
    LocalMessages lm = fx.build(fx.builder());
    // "java.lang.IllegalStateException: " is 33 characters
    String prefix = "java.lang.IllegalStateException: ";
    lm.register(
        "t.a",
        m -> {
          int length = Integer.parseInt(m.idemKey());
          throw new IllegalStateException("e".repeat(length - prefix.length()));
        },
        EngineFixture.config().backoff(Backoff.fixed(Duration.ofHours(1))).build());
    SaveResult exact = fx.save(lm, action("t.a", "1024"));
    SaveResult over = fx.save(lm, action("t.a", "1025"));
    assertThat(lm.runOnce()).isEqualTo(2);

    assertThat(view(lm, exact).lastError())
        .as("1,024 characters fit the column: nothing is cut")
        .isEqualTo(prefix + "e".repeat(1024 - prefix.length()));
    assertThat(view(lm, over).lastError())
        .as("one more is cut to 1,021 characters and an ellipsis")
        .hasSize(1024)
        .isEqualTo(prefix + "e".repeat(1021 - prefix.length()) + "...");
  }

  @Test
  void anErrorWithoutAMessageIsNamedByItsClassAndANotYetWithoutAReasonByItsDelay() {
    LocalMessages lm = fx.build(fx.builder());
    lm.register(
        "t.npe",
        m -> {
          throw new NullPointerException();
        },
        EngineFixture.config().backoff(Backoff.fixed(Duration.ofHours(1))).build());
    lm.register(
        "t.later",
        m -> {
          throw new RetryAfter(Duration.ofMinutes(5), null);
        },
        EngineFixture.config().build());
    lm.registerBatch(
        "t.batch",
        batch -> List.of(Outcome.retryAfter(Duration.ofMinutes(2), null)),
        EngineFixture.config().build());
    SaveResult npe = fx.save(lm, action("t.npe", "k"));
    SaveResult later = fx.save(lm, action("t.later", "k"));
    SaveResult batch = fx.save(lm, action("t.batch", "k"));
    assertThat(lm.runOnce()).isEqualTo(3);

    assertThat(view(lm, npe).lastError()).isEqualTo("java.lang.NullPointerException");
    MessageView l = view(lm, later);
    assertThat(l.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(l.lastError()).isEqualTo("retry after PT5M");
    assertThat(view(lm, batch).lastError()).isEqualTo("retry after PT2M");
  }

  @Test
  void aRedactorThatFailsOrReturnsNothingStillLeavesAStorableError() {
    LocalMessages failing =
        fx.build(
            fx.builder()
                .replicaId("failing")
                .errorRedactor(
                    e -> {
                      throw new IllegalArgumentException("bad pattern");
                    }));
    failing.register(
        "t.a",
        m -> {
          throw new PermanentFailure("card=4111111111111111");
        },
        EngineFixture.config().build());
    SaveResult a = fx.save(failing, action("t.a", "k"));
    assertThat(failing.runOnce()).isEqualTo(1);
    assertThat(view(failing, a).lastError())
        .as("the unredacted text is never stored")
        .isEqualTo("(error redactor failed: java.lang.IllegalArgumentException)");
    failing.close();

    LocalMessages empty = fx.build(fx.builder().replicaId("empty").errorRedactor(e -> null));
    empty.register(
        "t.b",
        m -> {
          throw new PermanentFailure("card=4111111111111111");
        },
        EngineFixture.config().build());
    SaveResult b = fx.save(empty, action("t.b", "k"));
    assertThat(empty.runOnce()).isEqualTo(1);
    MessageView t = view(empty, b);
    assertThat(t.status()).isEqualTo(MessageStatus.DEAD);
    assertThat(t.lastError()).isEmpty();
  }

  // ------------------------------------------------------------------ batch handlers

  @Test
  void aBatchHandlerThatReturnsFewerOutcomesOrNoneRetriesTheMessagesWithoutOne() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = fx.build(fx.builder().listener(counting).concurrency(9));
    lm.registerBatch(
        "t.short",
        batch -> List.of(Outcome.success()),
        EngineFixture.config().batchSize(3).backoff(Backoff.fixed(Duration.ofHours(1))).build());
    lm.registerBatch(
        "t.none",
        batch -> null,
        EngineFixture.config().batchSize(3).backoff(Backoff.fixed(Duration.ofHours(1))).build());
    lm.registerBatch(
        "t.holey",
        batch -> java.util.Arrays.asList(Outcome.success(), null, Outcome.success()),
        EngineFixture.config().batchSize(3).backoff(Backoff.fixed(Duration.ofHours(1))).build());
    fx.saveMany(lm, "t.short", 3, null);
    fx.saveMany(lm, "t.none", 3, null);
    fx.saveMany(lm, "t.holey", 3, null);

    assertThat(lm.runOnce()).isEqualTo(9);
    assertThat(fx.count("biz_type = ?", "t.holey"))
        .as("a null in the list is no outcome, its neighbours stand")
        .isEqualTo(1);
    assertThat(fx.count("biz_type = ? AND idem_key = ?", "t.holey", "k-1")).isEqualTo(1);
    assertThat(fx.count("biz_type = ?", "t.short")).as("the first succeeded").isEqualTo(2);
    assertThat(fx.count("biz_type = ? AND idem_key = ?", "t.short", "k-0")).isZero();
    assertThat(fx.count("biz_type = ?", "t.none")).isEqualTo(3);
    assertThat(
            fx.count(
                "status = 0 AND attempts = 1 AND last_error = ?",
                "batch handler returned no outcome"))
        .as("two without an outcome in the short list, three in the missing one, one null")
        .isEqualTo(6);
    assertThat(counting.count(Result.SUCCESS)).isEqualTo(3);
    assertThat(counting.count(Result.RETRY)).isEqualTo(6);
  }

  @Test
  void aBatchHandlerThatThrowsGivesEveryMessageOfTheBatchTheSameOutcome() {
    LocalMessages lm = fx.build(fx.builder().concurrency(4));
    lm.registerBatch(
        "t.perm",
        batch -> {
          throw new IllegalArgumentException("schema rejected");
        },
        EngineFixture.config().batchSize(2).maxAttempts(1).build());
    fx.saveMany(lm, "t.perm", 2, null);
    assertThat(lm.runOnce()).isEqualTo(2);
    assertThat(
            fx.count(
                "status = 2 AND last_error = ?",
                "attempts exhausted (1/1): java.lang.IllegalArgumentException: schema rejected"))
        .isEqualTo(2);
  }

  // ------------------------------------------------------------------ meters of outcomes

  @Test
  void everyKindOfOutcomeIsCountedByItsResult() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocalMessages lm = fx.build(fx.builder().meterRegistry(registry).concurrency(8));
    lm.register(
        "t.retry",
        m -> {
          throw new IllegalStateException("again");
        },
        EngineFixture.config().backoff(Backoff.fixed(Duration.ofHours(1))).build());
    lm.register(
        "t.later",
        m -> {
          throw new RetryAfter(Duration.ofHours(1), "later");
        },
        EngineFixture.config().build());
    lm.register(
        "t.last",
        m -> {
          throw new IllegalStateException("again");
        },
        EngineFixture.config().maxAttempts(1).build());
    for (String type : List.of("t.retry", "t.later", "t.last")) {
      fx.save(lm, action(type, "k"));
    }
    assertThat(lm.runOnce()).isEqualTo(3);
    String d = "localmessage.deliveries";
    assertThat(counter(registry, d, "t.retry", "retry")).isEqualTo(1);
    assertThat(counter(registry, d, "t.later", "retry_after")).isEqualTo(1);
    assertThat(counter(registry, d, "t.last", "exhausted")).isEqualTo(1);
    assertThat(counter(registry, d, "t.retry", "success")).isZero();
    assertThat(registry.get("localmessage.handler.duration").tag("biz_type", "t.retry").timer())
        .satisfies(t -> assertThat(t.count()).isEqualTo(1));
    assertThat(registry.find("localmessage.end.to.end").tag("biz_type", "t.retry").timer())
        .as("end-to-end latency counts successes only")
        .satisfies(t -> assertThat(t == null || t.count() == 0).isTrue());
    assertThat(counter(registry, "localmessage.claimed", "t.retry", null)).isEqualTo(1);
  }
}
