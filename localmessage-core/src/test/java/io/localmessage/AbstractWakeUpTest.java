package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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

  /**
   * Slow handlers (a call to another service) free their slots one by one, not in a burst: the
   * poller refills a freed eighth of the slots at once instead of waiting until half are free. With
   * 16 slots, 2 finished calls start the next 2 tickets while the other 14 are still inside; the 10
   * s poll interval cannot explain a start within the test, and waiting for half the slots would
   * start them only after 8 had finished.
   */
  @Test
  void slowHandlersGetFreedSlotsRefilledWithoutWaitingForHalfOfThem() throws Exception {
    LocalMessages lm = fx.build(fx.builder().pollInterval(SLOW_POLL).concurrency(16));
    Semaphore gate = new Semaphore(0);
    AtomicInteger started = new AtomicInteger();
    AtomicInteger finished = new AtomicInteger();
    List<Integer> finishedWhenStarting = new CopyOnWriteArrayList<>();
    lm.register(
        "t.slow",
        m -> {
          finishedWhenStarting.add(finished.get());
          started.incrementAndGet();
          try {
            // the handler's work: a slow call, far longer than a claim even on a cold engine
            Thread.sleep(1_000);
            gate.tryAcquire(2_500, TimeUnit.MILLISECONDS); // held by the test, within the timeout
          } finally {
            finished.incrementAndGet();
          }
        },
        EngineFixture.config().concurrency(16).handlerTimeout(Duration.ofSeconds(4)).build());
    for (int i = 0; i < 32; i++) {
      String key = "k" + i;
      lm.inTransaction(c -> lm.save(c, action("t.slow", key)));
    }
    try {
      lm.start();
      await().atMost(Duration.ofSeconds(5)).until(() -> started.get() == 16);
      gate.release(2);
      await().atMost(Duration.ofSeconds(5)).until(() -> started.get() >= 18);
      // the 17th and 18th tickets started when only the 2 released calls had finished
      assertThat(finishedWhenStarting.subList(16, 18)).allMatch(f -> f < 8);
    } finally {
      gate.release(1_000);
    }
  }
}
