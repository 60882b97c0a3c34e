package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A ticket starts when it becomes due, not at the next poll. The poll interval in these tests is 10
 * s, so only a wake-up explains a start within a second.
 */
public abstract class AbstractWakeUpTest extends DatabaseTest {
  protected static final Duration SLOW_POLL = Duration.ofSeconds(10);

  protected static NewMessage action(String type, String key) {
    return NewMessage.action(type, key).payload("{}").build();
  }

  @Test
  void aRetryDueSoonStartsWhenItIsDueNotAtTheNextPoll() {
    LocalMessages lm = fx.build(fx.builder().pollInterval(SLOW_POLL));
    List<Long> calls = new CopyOnWriteArrayList<>();
    lm.register(
        "t.soon",
        m -> {
          calls.add(System.nanoTime());
          if (calls.size() == 1) {
            throw new RetryAfter(Duration.ofMillis(150), "not yet");
          }
        },
        EngineFixture.config().build());
    lm.start();
    lm.inTransaction(c -> lm.save(c, action("t.soon", "k")));
    await().atMost(Duration.ofSeconds(3)).until(() -> calls.size() == 2);
    long gapMillis = (calls.get(1) - calls.get(0)) / 1_000_000;
    assertThat(gapMillis).isBetween(150L, 2_000L);
  }
}
