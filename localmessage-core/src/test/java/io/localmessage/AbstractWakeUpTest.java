package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.StatementLog;
import io.localmessage.testing.Waits;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
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
   * Without database wake-ups the engine still knows when its own retries are due: a retry due in
   * 300 ms runs then, not at the next round (6 s here, a tenth of the one-minute poll interval).
   */
  @Test
  void aRetryDueSoonStartsWhenItIsDueWithWakeUpsOffAndAMinutePollInterval() {
    LocalMessages lm = fx.build(fx.builder().pollInterval(Duration.ofMinutes(1)).wakeUps(false));
    List<Long> calls = new CopyOnWriteArrayList<>();
    lm.register(
        "t.soon",
        m -> {
          calls.add(System.nanoTime());
          if (calls.size() == 1) {
            throw new RetryAfter(Duration.ofMillis(300), "not yet");
          }
        },
        EngineFixture.config().build());
    lm.inTransaction(c -> lm.save(c, action("t.soon", "k")));
    lm.start(); // the first round runs at the start
    await().atMost(Duration.ofSeconds(4)).until(() -> calls.size() == 2);
    long gapMillis = (calls.get(1) - calls.get(0)) / 1_000_000;
    assertThat(gapMillis).isBetween(300L, 4_000L);
  }

  /**
   * The poller's round trips follow the work, not a busy loop: an idle engine claims once per poll
   * interval; a round that found messages comes back at a tenth of it (here 20 ms) and then doubles
   * back to the interval. Over 1.5 s of quiet after one message with a 200 ms interval that is
   * about a dozen claims, where a loop that forgot to wait or to double makes hundreds.
   */
  @Test
  void anIdleEngineClaimsAboutOncePerPollIntervalAndBacksOffAfterWork() {
    StatementLog log = new StatementLog(ds);
    fx.build(fx.builder()).close(); // the tables
    LocalMessages lm =
        fx.build(
            fx.builder(log.dataSource())
                .autoCreateSchema(false)
                .replicaId("idle")
                .wakeUps(false)
                .pollInterval(Duration.ofMillis(200)));
    AtomicInteger runs = new AtomicInteger();
    lm.register("t.idle", m -> runs.incrementAndGet(), EngineFixture.config().build());
    fx.save(lm, action("t.idle", "k"));
    lm.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
    long before = claims(log);
    long cpuBefore = cpuNanos("lm-poller-idle");
    Duration window = Waits.window(Duration.ofMillis(1_500));
    long quiet = claims(log) - before;
    // 20, 40, 80, 160 ms, then every 200 ms: about 10 in 1.5 s (a loaded machine makes fewer); a
    // window that a loaded machine stretched allows a poll per 200 ms of it
    assertThat(quiet)
        .as("claims in %s of quiet", window)
        .isBetween(3L, 9 + window.toMillis() / 200);
    // and between claims it waits: a loop that spins without claiming burns the CPU instead
    assertThat(Duration.ofNanos(cpuNanos("lm-poller-idle") - cpuBefore))
        .as("the poller's CPU time in 1.5 s of quiet")
        .isLessThan(Duration.ofMillis(400));
  }

  private static long cpuNanos(String threadName) {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long id =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().equals(threadName))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no thread " + threadName))
            .getId();
    return mx.getThreadCpuTime(id);
  }

  /**
   * A claim that fills every slot is followed by the next one as soon as slots come back, not at
   * the next poll: with a 10-minute poll interval and 10 slots, 200 quick messages need 20 or more
   * claims, and a single claim that waited for the poll (or its adaptive tenth, a minute) would
   * take longer than the whole deadline. The deadline only stops a hung test: a loaded machine (the
   * test command's two builds beside a busy core) once took more than the 8 s this test used to
   * allow.
   */
  @Test
  void aBacklogIsWorkedOffClaimAfterFullClaimWithoutWaitingForThePollInterval() {
    LocalMessages lm = fx.build(fx.builder().pollInterval(Duration.ofMinutes(10)).concurrency(10));
    AtomicInteger runs = new AtomicInteger();
    lm.register("t.backlog", m -> runs.incrementAndGet(), EngineFixture.config().build());
    fx.saveMany(lm, "t.backlog", 200, null);
    lm.start();
    await().atMost(Duration.ofSeconds(50)).until(() -> runs.get() == 200);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
  }

  /**
   * A claim that comes back short is not proof that nothing else is due: {@code SKIP LOCKED} passes
   * over rows another session holds at that moment (here the test's own transaction, as another
   * replica's claim or an operator's action would). Once they are free, the slots that come back
   * start the next claim: with a 10-minute poll interval, waiting for the poll (or its adaptive
   * tenth, a minute) cannot run them within the deadline.
   */
  @Test
  void rowsPassedOverBecauseTheyWereLockedAreClaimedWhenSlotsComeBack() throws Exception {
    LocalMessages lm = fx.build(fx.builder().pollInterval(Duration.ofMinutes(10)).concurrency(10));
    AtomicInteger started = new AtomicInteger();
    CountDownLatch gate = new CountDownLatch(1);
    lm.register(
        "t.passed",
        m -> {
          started.incrementAndGet();
          if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never opened the gate");
          }
        },
        EngineFixture.config().build());
    fx.saveMany(lm, "t.passed", 6, null);
    try (Connection holder = ds.getConnection()) {
      holder.setAutoCommit(false);
      // the three oldest by a plain read, then each locked by its id alone: a locking statement
      // that scans (a subquery, an IN list on a small table) may lock every row it reads (InnoDB
      // does, at REPEATABLE READ), which would hide all six rows from the claim
      List<Long> oldest = new ArrayList<>();
      try (Statement st = holder.createStatement();
          ResultSet rs = st.executeQuery("SELECT id FROM " + fx.table + " ORDER BY id")) {
        while (rs.next() && oldest.size() < 3) {
          oldest.add(rs.getLong(1));
        }
      }
      int locked = 0;
      for (long id : oldest) {
        try (PreparedStatement ps =
            holder.prepareStatement("SELECT id FROM " + fx.table + " WHERE id = ? FOR UPDATE")) {
          ps.setLong(1, id);
          try (ResultSet rs = ps.executeQuery()) {
            locked += rs.next() ? 1 : 0;
          }
        }
      }
      assertThat(locked).isEqualTo(3);
      lm.start();
      await().atMost(Duration.ofSeconds(20)).until(() -> started.get() == 3);
      holder.commit();
    }
    gate.countDown();
    await().atMost(Duration.ofSeconds(20)).until(() -> started.get() == 6);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
  }

  private static long claims(StatementLog log) {
    return log.count("lm-poller-idle", sql -> sql.contains("SKIP LOCKED"));
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
