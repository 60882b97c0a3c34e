package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A ticket starts when it becomes due, not at the next poll. The poll interval in these tests is 10
 * s, so only a wake-up explains a start within a second.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractWakeUpTest {
  protected static final Duration SLOW_POLL = Duration.ofSeconds(10);
  protected TestDatabase db;
  protected DataSource ds;
  protected EngineFixture fx;

  protected abstract TestDatabase createDatabase();

  @BeforeAll
  void createDb() {
    db = createDatabase();
    ds = db.dataSource(16);
  }

  @AfterAll
  void dropDb() {
    db.close();
  }

  @BeforeEach
  void newTable() {
    fx = new EngineFixture(ds);
  }

  @AfterEach
  void stopEngines() {
    fx.close();
  }

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
