package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Ordered types when the saves of one aggregate come from overlapping transactions (issue 45): the
 * aggregate's order is the order its saves committed in, and never two of its messages in flight,
 * without the application serializing its own transactions. Each test runs two real transactions on
 * separate connections: T1 saves and stays open, T2 saves the same aggregate on another thread. A
 * subclass per database says how to see that a session waits for a lock.
 */
public abstract class AbstractOrderedSaveTest extends DatabaseTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  private ExecutorService saver;

  @Override
  protected int poolSize() {
    return 12;
  }

  /** The id of the session behind {@code c}, as the database's own views name it. */
  protected abstract long sessionId(Connection c) throws SQLException;

  /** Whether session {@code session} is waiting for a lock right now (asked on {@code c}). */
  protected abstract boolean waitsForLock(Connection c, long session) throws SQLException;

  @BeforeEach
  void startSaver() {
    AtomicInteger n = new AtomicInteger();
    saver = Executors.newCachedThreadPool(r -> new Thread(r, "t2-saver-" + n.incrementAndGet()));
  }

  @AfterEach
  void stopSaver() throws InterruptedException {
    saver.shutdownNow();
    assertThat(saver.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /** Records handler starts and ends per aggregate, and how many ran at once in one aggregate. */
  static final class Runs {
    final List<String> events = new CopyOnWriteArrayList<>();
    final ConcurrentHashMap<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    final AtomicInteger maxInFlight = new AtomicInteger();

    Handler handler(Duration work) {
      return m -> {
        int now =
            inFlight.computeIfAbsent(m.aggregateId(), k -> new AtomicInteger()).incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        events.add("start " + m.idemKey());
        try {
          Thread.sleep(work.toMillis()); // the handler's work, long enough to overlap a successor
        } finally {
          events.add("end " + m.idemKey());
          inFlight.get(m.aggregateId()).decrementAndGet();
        }
      };
    }
  }

  /**
   * An engine with 4 slots and ordered type {@code t.o}, whose handler works {@code work}; not
   * started.
   */
  private LocalMessages orderedEngine(Runs runs, Duration work) {
    LocalMessages lm = fx.build(fx.builder().concurrency(4));
    lm.register("t.o", runs.handler(work), EngineFixture.config().ordered(true).build());
    return lm;
  }

  private static NewMessage ordered(String type, String key, String aggregate) {
    return NewMessage.action(type, key).aggregateId(aggregate).build();
  }

  private Connection begin() throws SQLException {
    Connection c = ds.getConnection();
    c.setAutoCommit(false);
    return c;
  }

  /** Saves {@code messages} on a new connection of another thread and commits. */
  private Future<List<SaveResult>> saveOnOtherThread(
      LocalMessages lm, AtomicLong session, List<NewMessage> messages) {
    return saver.submit(
        () -> {
          try (Connection c = begin()) {
            session.set(sessionId(c));
            List<SaveResult> r = lm.saveAll(c, messages);
            c.commit();
            return r;
          }
        });
  }

  /** Waits until T2's session is seen waiting for a lock, or T2 or {@code alternative} is done. */
  private boolean awaitBlocked(
      Future<?> t2, AtomicLong session, java.util.function.BooleanSupplier alternative) {
    boolean[] blocked = {false};
    try {
      awaitBlockedOrDone(t2, session, alternative, blocked);
    } catch (org.awaitility.core.ConditionTimeoutException notSeen) {
      // the server did not show the wait (MariaDB's INNODB_TRX under load), but T2, a few
      // statements, is still not done after the whole wait while T1 is open: it is blocked
      return !t2.isDone();
    }
    return blocked[0] && !t2.isDone();
  }

  private void awaitBlockedOrDone(
      Future<?> t2,
      AtomicLong session,
      java.util.function.BooleanSupplier alternative,
      boolean[] blocked) {
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> {
              if (t2.isDone() || alternative.getAsBoolean()) {
                return true;
              }
              if (session.get() == 0) {
                return false;
              }
              try (Connection c = ds.getConnection()) {
                blocked[0] = waitsForLock(c, session.get());
              }
              return blocked[0];
            });
  }

  @Test
  void overlappingSavesOfOneAggregateRunInCommitOrderNeverSideBySide() throws Exception {
    Runs runs = new Runs();
    LocalMessages lm = orderedEngine(runs, Duration.ofMillis(400));
    lm.start();

    AtomicLong t2Session = new AtomicLong();
    Future<List<SaveResult>> t2;
    boolean t2Waited;
    try (Connection t1 = begin()) {
      lm.save(t1, ordered("t.o", "m1", "agg-1"));
      t2 = saveOnOtherThread(lm, t2Session, List.of(ordered("t.o", "m2", "agg-1")));
      // before the fix T2 committed at once and m2 started while m1 was invisible
      t2Waited = awaitBlocked(t2, t2Session, () -> runs.events.contains("start m2"));
      t1.commit();
    }
    t2.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    await().atMost(WAIT).until(() -> runs.events.size() == 4);

    assertThat(runs.events)
        .as("the aggregate runs in commit order, one message at a time")
        .containsExactly("start m1", "end m1", "start m2", "end m2");
    assertThat(runs.maxInFlight).hasValue(1);
    assertThat(t2Waited).as("T2's save waited for T1's commit").isTrue();
  }

  @Test
  void aRolledBackSaveReleasesTheAggregateAndTheWaitingSaveRuns() throws Exception {
    Runs runs = new Runs();
    LocalMessages lm = orderedEngine(runs, Duration.ofMillis(50));
    lm.start();

    AtomicLong t2Session = new AtomicLong();
    Future<List<SaveResult>> t2;
    boolean t2Waited;
    try (Connection t1 = begin()) {
      lm.save(t1, ordered("t.o", "m1", "agg-1"));
      t2 = saveOnOtherThread(lm, t2Session, List.of(ordered("t.o", "m2", "agg-1")));
      t2Waited = awaitBlocked(t2, t2Session, () -> false);
      t1.rollback();
    }
    t2.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    await().atMost(WAIT).until(() -> runs.events.size() == 2);
    assertThat(runs.events).containsExactly("start m2", "end m2");
    assertThat(t2Waited).as("T2's save waited for T1 to end").isTrue();
    // "end m2" is recorded inside the handler: its success is written back just after
    await().atMost(WAIT).until(() -> fx.countAll() == 0);
  }

  @Test
  void batchSavesOfTheSameAggregatesInOppositeOrdersDoNotDeadlock() throws Exception {
    Runs runs = new Runs();
    LocalMessages lm = orderedEngine(runs, Duration.ofMillis(10));

    AtomicLong t2Session = new AtomicLong();
    Future<List<SaveResult>> t2;
    boolean t2Waited;
    try (Connection t1 = begin()) {
      lm.saveAll(
          t1,
          List.of(
              ordered("t.o", "a1", "agg-a"),
              ordered("t.o", "b1", "agg-b"),
              ordered("t.o", "c1", "agg-c")));
      t2 =
          saveOnOtherThread(
              lm,
              t2Session,
              List.of(
                  ordered("t.o", "c2", "agg-c"),
                  ordered("t.o", "b2", "agg-b"),
                  ordered("t.o", "a2", "agg-a")));
      t2Waited = awaitBlocked(t2, t2Session, () -> false);
      t1.commit();
    }
    List<SaveResult> second = t2.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(second).extracting(SaveResult::duplicate).containsOnly(false);
    assertThat(t2Waited).as("T2's batch waited for T1's commit").isTrue();

    lm.start();
    await().atMost(WAIT).until(() -> runs.events.size() == 12);
    for (String agg : List.of("a", "b", "c")) {
      List<String> mine = new ArrayList<>();
      for (String e : runs.events) {
        if (e.endsWith(" " + agg + "1") || e.endsWith(" " + agg + "2")) {
          mine.add(e);
        }
      }
      assertThat(mine)
          .as("aggregate " + agg)
          .containsExactly(
              "start " + agg + "1", "end " + agg + "1", "start " + agg + "2", "end " + agg + "2");
    }
    assertThat(runs.maxInFlight).hasValue(1);
  }

  @Test
  void savesOfUnorderedTypesAndOfOtherAggregatesDoNotWait() throws Exception {
    LocalMessages lm = fx.build(fx.builder());
    lm.register("t.u", m -> {}, EngineFixture.config().build());
    lm.register("t.o", m -> {}, EngineFixture.config().ordered(true).build());
    lm.register("t.o2", m -> {}, EngineFixture.config().ordered(true).build());

    try (Connection t1 = begin()) {
      lm.save(t1, ordered("t.u", "u1", "agg-1"));
      lm.save(t1, ordered("t.o", "o1", "agg-1"));
      AtomicLong session = new AtomicLong();
      // same aggregate of the unordered type, another aggregate of the ordered type, and the same
      // aggregate id under another ordered biz type: none waits for T1
      assertThat(
              saveOnOtherThread(
                      lm,
                      session,
                      List.of(
                          ordered("t.u", "u2", "agg-1"),
                          ordered("t.o", "o2", "agg-2"),
                          ordered("t.o2", "o3", "agg-1"),
                          NewMessage.action("t.o", "o4").build()))
                  .get(WAIT.toSeconds(), TimeUnit.SECONDS))
          .hasSize(4);
      t1.commit();
    }
    assertThat(fx.countAll()).isEqualTo(6);
  }

  @Test
  void aTypeNamedUnorderedIsSavedWithoutTheLockOnAReplicaThatDoesNotHandleIt() throws Exception {
    // a replica that only saves: t.u is named unordered, t.x is not named (locked as if ordered)
    LocalMessages saveOnly = fx.build(fx.builder().unorderedTypes("t.u"));
    Future<List<SaveResult>> x2;
    try (Connection t1 = begin()) {
      saveOnly.save(t1, ordered("t.u", "u1", "agg-1"));
      saveOnly.save(t1, ordered("t.x", "x1", "agg-1"));
      assertThat(
              saveOnOtherThread(saveOnly, new AtomicLong(), List.of(ordered("t.u", "u2", "agg-1")))
                  .get(WAIT.toSeconds(), TimeUnit.SECONDS))
          .as("the unordered type's save does not wait for T1")
          .hasSize(1);
      AtomicLong session = new AtomicLong();
      x2 = saveOnOtherThread(saveOnly, session, List.of(ordered("t.x", "x2", "agg-1")));
      assertThat(awaitBlocked(x2, session, () -> false))
          .as("a type this replica does not know waits for T1, as if ordered")
          .isTrue();
      t1.commit();
    }
    assertThat(x2.get(WAIT.toSeconds(), TimeUnit.SECONDS)).hasSize(1);
    assertThat(fx.countAll()).isEqualTo(4);
    assertThatThrownBy(
            () -> saveOnly.register("t.u", m -> {}, EngineFixture.config().ordered(true).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'t.u' is named unordered");
  }
}
