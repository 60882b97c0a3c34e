package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.internal.engine.Ticker;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.HandTicker;
import io.localmessage.testing.Intercepting;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine's timing rules with its interval clock (the {@link Ticker}) near both ends of {@code
 * long}: a minute above {@link Long#MIN_VALUE}, at -1, 5 seconds below {@link Long#MAX_VALUE} (it
 * wraps to {@link Long#MIN_VALUE} while a lease is being renewed) and half a second below (it wraps
 * while the first messages run, retry and time out). The first poll, retries after their backoff,
 * lease renewals and handler timeouts all happen on time; a comparison of two readings instead of
 * their difference, or a deadline computed past the wrap, shows here as a retry that waits for the
 * 10-minute poll, a lease that runs out under a running handler, or a timeout that never fires.
 * Timing is measured by the test on its own clock, never by the engine's.
 *
 * <p>The rules timed by the ticker alone (the poll interval, lease renewals, handler timeouts, the
 * shutdown timeout) are also driven by hand ({@link HandTicker}): set an hour (or ten minutes)
 * long, they do not fire while the test waits half a second, and fire within seconds once the test
 * moves the ticker past them, across the wrap past {@link Long#MAX_VALUE}. An engine rule that read
 * the system clock instead, or a wait that slept its whole length without reading the ticker again,
 * fails here.
 */
class PostgresTickerTest extends DatabaseTest {
  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }

  @ParameterizedTest(name = "ticker starting at {0}")
  @ValueSource(
      longs = {
        Long.MIN_VALUE + 60 * NANOS_PER_SECOND,
        -1L,
        Long.MAX_VALUE - 5 * NANOS_PER_SECOND,
        Long.MAX_VALUE - NANOS_PER_SECOND / 2
      })
  void firstPollRetriesRenewalsAndTimeoutsHappenOnTime(long start) throws Exception {
    long built = System.nanoTime();
    LocalMessages lm =
        fx.build(
            fx.builder()
                .ticker(Ticker.startingAt(start))
                .replicaId("edge")
                // only the first round, the writer's retry times and wake-ups (off) can start work
                .pollInterval(Duration.ofMinutes(10))
                .wakeUps(false)
                .lease(Duration.ofMillis(1500))
                .writeBackMargin(Duration.ofMillis(300))
                .concurrency(4));
    // a second replica on the real clock takes over whatever lease the first one lets run out
    LocalMessages other =
        fx.build(fx.builder().replicaId("other").pollInterval(Duration.ofMillis(50)));

    // the first poll runs at once on start, whatever the ticker reads
    CountDownLatch first = new CountDownLatch(1);
    lm.register("t.first", m -> first.countDown(), EngineFixture.config().build());
    fx.save(lm, NewMessage.action("t.first", "f").build());

    // retries after a 300 ms backoff: claimed when due, not at the next (10-minute) poll
    List<Long> retryRuns = new CopyOnWriteArrayList<>();
    lm.register(
        "t.retry",
        m -> {
          retryRuns.add(System.nanoTime());
          if (m.attempt() < 3) {
            throw new IllegalStateException("not yet");
          }
        },
        EngineFixture.config()
            .maxAttempts(5)
            .backoff(Backoff.fixed(Duration.ofMillis(300)))
            .build());

    // a handler that runs 4 leases long: renewed all along (crossing the wrap on the last start)
    CountDownLatch longStarted = new CountDownLatch(1);
    CountDownLatch longRelease = new CountDownLatch(1);
    AtomicInteger longRuns = new AtomicInteger();
    Handler longHandler =
        m -> {
          longRuns.incrementAndGet();
          longStarted.countDown();
          longRelease.await(30, TimeUnit.SECONDS);
        };
    HandlerConfig longConfig =
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(20)).build();
    lm.register("t.long", longHandler, longConfig);
    other.register("t.long", longHandler, longConfig);

    // a handler past its 500 ms timeout is interrupted on time
    AtomicLong timeoutStarted = new AtomicLong();
    AtomicLong interruptedAfter = new AtomicLong(-1);
    lm.register(
        "t.timeout",
        m -> {
          long t0 = System.nanoTime();
          timeoutStarted.set(t0);
          try {
            new CountDownLatch(1).await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            interruptedAfter.compareAndSet(-1, System.nanoTime() - t0);
            throw e;
          }
        },
        EngineFixture.config().handlerTimeout(Duration.ofMillis(500)).maxAttempts(1).build());

    // all saved before the start: the first round claims them, nothing else would before 10 min
    fx.save(lm, NewMessage.action("t.retry", "r").build());
    fx.save(lm, NewMessage.action("t.long", "l").build());
    fx.save(lm, NewMessage.action("t.timeout", "t").build());
    lm.start();
    assertThat(first.await(5, TimeUnit.SECONDS))
        .as("the first poll ran the saved message")
        .isTrue();

    assertThat(longStarted.await(10, TimeUnit.SECONDS)).as("the long handler started").isTrue();
    other.start();
    // more than three leases: an unrenewed lease would have run out, and the other replica would
    // have started the message a second time
    await()
        .during(Duration.ofMillis(5500))
        .atMost(Duration.ofSeconds(8))
        .until(() -> longRuns.get() == 1);
    longRelease.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.count("biz_type = 't.long'") == 0);
    assertThat(longRuns.get()).as("runs of the long handler").isEqualTo(1);

    try {
      await().atMost(Duration.ofSeconds(10)).until(() -> retryRuns.size() == 3);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          "retry runs "
              + retryRuns.size()
              + "; rows: "
              + io.localmessage.testing.Sql.string(
                  ds,
                  "SELECT string_agg(biz_type || ' s=' || status || ' a=' || attempts || ' due='"
                      + " || next_retry_at || ' now=' || now() || ' owner=' || coalesce(lease_owner,"
                      + " '-') || ' err=' || coalesce(last_error, '-'), ' | ') FROM "
                      + fx.table),
          e);
    }
    for (int i = 1; i < 3; i++) {
      long gap = retryRuns.get(i) - retryRuns.get(i - 1);
      assertThat(gap)
          .as("gap before retry " + i + " (ns)")
          .isBetween(250_000_000L, 5 * NANOS_PER_SECOND);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.count("biz_type = 't.retry'") == 0);

    await().atMost(Duration.ofSeconds(10)).until(() -> interruptedAfter.get() >= 0);
    assertThat(interruptedAfter.get())
        .as("the 500 ms handler timeout fired after (ns)")
        .isBetween(400_000_000L, 3 * NANOS_PER_SECOND);

    if (start > 0) {
      assertThat(System.nanoTime() - built)
          .as("the ticker wrapped past Long.MAX_VALUE during the run")
          .isGreaterThan(Long.MAX_VALUE - start);
    }
  }

  /** 10 minutes below {@link Long#MAX_VALUE}: each hand-driven test's jump wraps the ticker. */
  private static final long NEAR_WRAP = Long.MAX_VALUE - 600 * NANOS_PER_SECOND;

  private static final Duration QUIET = Duration.ofMillis(500);

  @Test
  void aMessageSavedWithoutAWakeUpWaitsForThePollIntervalOnTheTicker() throws Exception {
    HandTicker ticker = HandTicker.startingAt(NEAR_WRAP);
    // the poller's first claim, and its end (the poller gives its connection back)
    AtomicInteger claims = new AtomicInteger();
    AtomicInteger claimsEnded = new AtomicInteger();
    javax.sql.DataSource watched =
        Intercepting.dataSource(
            ds,
            (real, m, a) -> {
              if (m.getName().equals("prepareStatement")
                  && a[0] instanceof String sql
                  && sql.startsWith("WITH due AS")) {
                claims.incrementAndGet();
              } else if (m.getName().equals("close")
                  && Thread.currentThread().getName().startsWith("lm-poller")
                  && claims.get() > claimsEnded.get()) {
                claimsEnded.incrementAndGet();
              }
              return Intercepting.PROCEED;
            });
    LocalMessages lm =
        fx.build(
            fx.builder(watched)
                .ticker(ticker)
                .pollInterval(Duration.ofHours(1))
                .maintenanceInterval(Duration.ofHours(1))
                .wakeUps(false));
    AtomicInteger runs = new AtomicInteger();
    lm.register("t.poll", m -> runs.incrementAndGet(), EngineFixture.config().build());
    lm.start();
    // the first poll runs at start and finds nothing (a poll that finds work is followed by
    // quicker ones); the next is an hour away on the ticker
    await().atMost(Duration.ofSeconds(5)).until(() -> claimsEnded.get() >= 1);
    fx.save(lm, NewMessage.action("t.poll", "p").build());
    await().during(QUIET).atMost(QUIET.plusSeconds(2)).until(() -> runs.get() == 0);
    assertThat(claims.get()).as("claims before the ticker moved").isEqualTo(1);
    ticker.advance(Duration.ofMinutes(61));
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> fx.count("biz_type = 't.poll'") == 0);
  }

  @Test
  void aLeaseIsRenewedOnceAThirdOfItPassedOnTheTicker() throws Exception {
    HandTicker ticker = HandTicker.startingAt(NEAR_WRAP);
    LocalMessages lm = fx.build(withLease(ticker, Duration.ofHours(1)));
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    lm.register(
        "t.renew",
        m -> {
          started.countDown();
          release.await(30, TimeUnit.SECONDS);
        },
        EngineFixture.config().handlerTimeout(Duration.ofHours(1)).build());
    fx.save(lm, NewMessage.action("t.renew", "r").build());
    lm.start();
    try {
      assertThat(started.await(5, TimeUnit.SECONDS)).as("the handler started").isTrue();
      long leaseEnd = leaseEndMillis();
      // renewals come a third into the lease (20 minutes on the ticker), not before
      await().during(QUIET).atMost(QUIET.plusSeconds(2)).until(() -> leaseEndMillis() == leaseEnd);
      ticker.advance(Duration.ofMinutes(21));
      await().atMost(Duration.ofSeconds(5)).until(() -> leaseEndMillis() > leaseEnd);
    } finally {
      release.countDown();
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> fx.count("biz_type = 't.renew'") == 0);
  }

  @Test
  void aHandlerTimeoutFiresWhenTheTickerPassesIt() throws Exception {
    HandTicker ticker = HandTicker.startingAt(NEAR_WRAP);
    LocalMessages lm =
        // a lease the jump does not end: the timed-out attempt's outcome is written
        fx.build(withLease(ticker, Duration.ofHours(2)));
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger interrupted = new AtomicInteger();
    lm.register(
        "t.timeout",
        waitingUntilInterrupted(started, interrupted),
        EngineFixture.config().handlerTimeout(Duration.ofHours(1)).maxAttempts(1).build());
    fx.save(lm, NewMessage.action("t.timeout", "t").build());
    lm.start();
    assertThat(started.await(5, TimeUnit.SECONDS)).as("the handler started").isTrue();
    await().during(QUIET).atMost(QUIET.plusSeconds(2)).until(() -> interrupted.get() == 0);
    ticker.advance(Duration.ofMinutes(61));
    await().atMost(Duration.ofSeconds(5)).until(() -> interrupted.get() == 1);
    // its one attempt timed out: DEAD, not run again
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> fx.count("biz_type = 't.timeout' AND status = 2") == 1);
  }

  @Test
  void closeWaitsForAHandlerUntilTheShutdownTimeoutPassesOnTheTicker() throws Exception {
    HandTicker ticker = HandTicker.startingAt(NEAR_WRAP);
    LocalMessages lm =
        // a lease the jump does not end: the interrupted attempt's outcome is written
        fx.build(withLease(ticker, Duration.ofHours(1)).shutdownTimeout(Duration.ofMinutes(10)));
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger interrupted = new AtomicInteger();
    lm.register(
        "t.close", waitingUntilInterrupted(started, interrupted), EngineFixture.config().build());
    fx.save(lm, NewMessage.action("t.close", "c").build());
    lm.start();
    assertThat(started.await(5, TimeUnit.SECONDS)).as("the handler started").isTrue();
    java.util.concurrent.ExecutorService closer =
        java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> new Thread(r, "ticker-test-closer"));
    try {
      java.util.concurrent.Future<?> closed = closer.submit(lm::close);
      await().during(QUIET).atMost(QUIET.plusSeconds(2)).until(() -> !closed.isDone());
      assertThat(interrupted.get()).as("interrupted before the shutdown timeout").isZero();
      ticker.advance(Duration.ofMinutes(11));
      closed.get(10, TimeUnit.SECONDS);
      assertThat(interrupted.get()).as("interrupted once the shutdown timeout passed").isEqualTo(1);
      // the interrupted attempt is given back: the message waits to run again, not DEAD
      assertThat(fx.count("biz_type = 't.close' AND status = 0 AND lease_owner IS NULL"))
          .isEqualTo(1);
    } finally {
      closer.shutdownNow();
      assertThat(closer.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }
  }

  /** An engine on {@code ticker} with {@code lease}, and an execution cap an hour longer. */
  private LocalMessagesBuilder withLease(HandTicker ticker, Duration lease) {
    return fx.builder().ticker(ticker).lease(lease).maxExecutionTime(lease.plusHours(1));
  }

  /** A handler that says it started and waits (30 s at most) until interrupted, counting that. */
  private static Handler waitingUntilInterrupted(
      CountDownLatch started, AtomicInteger interrupted) {
    return m -> {
      started.countDown();
      try {
        new CountDownLatch(1).await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted.incrementAndGet();
        throw e;
      }
    };
  }

  private long leaseEndMillis() {
    return Sql.count(
        ds,
        "SELECT (extract(epoch FROM next_retry_at) * 1000)::bigint FROM "
            + fx.table
            + " WHERE biz_type = 't.renew'");
  }
}
