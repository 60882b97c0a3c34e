package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.admin.MessageView;
import io.localmessage.spi.EngineListener;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Asynchronous handlers and virtual threads, on every database: a pending stage holds its slot and
 * lease but no thread, completes into the same outcome rules as a blocking handler, and a stage
 * that times out or outlives the shutdown can never make its message run next to its own effect.
 */
public abstract class AbstractAsyncHandlerTest extends DatabaseTest {

  private static NewMessage action(String type, String key) {
    return NewMessage.action(type, key).payload("{}").build();
  }

  /** A stage that ignores cancel, as a client whose request is already on the wire would. */
  static final class Stubborn extends CompletableFuture<Void> {
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      return false;
    }
  }

  private static long liveThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith(prefix))
        .count();
  }

  private MessageView view(LocalMessages lm, long id) {
    return lm.admin().get(id).orElseThrow();
  }

  @Test
  void thousandsOfPendingStagesHoldSlotsButNoThreads() {
    int n = 1_500;
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm =
        fx.build(
            fx.builder()
                .replicaId("async")
                .concurrency(n)
                .lease(Duration.ofSeconds(6))
                .listener(counting));
    List<CompletableFuture<Void>> pending = new CopyOnWriteArrayList<>();
    lm.registerAsync(
        "t.a",
        m -> {
          CompletableFuture<Void> f = new CompletableFuture<>();
          pending.add(f);
          return f;
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(30)).build());
    fx.saveMany(lm, "t.a", n, null);
    lm.start();
    await().atMost(Duration.ofSeconds(30)).until(() -> pending.size() == n);
    assertThat(liveThreads("lm-worker-async") + liveThreads("lm-async-async"))
        .as("threads calling %s pending handlers", n)
        .isLessThanOrEqualTo(8);
    assertThat(fx.count("status = 0")).isEqualTo(n);
    // their leases are renewed, more than a statement's 1,000 at a time
    await().atMost(Duration.ofSeconds(20)).until(() -> counting.renewed.get() >= n);
    assertThat(pending).as("no stage started twice").hasSize(n);
    assertThat(lm.health().loops())
        .filteredOn(l -> l.name().equals("renewer"))
        .singleElement()
        .satisfies(l -> assertThat(l.lastError()).as("renewer error").isNull());
    pending.forEach(f -> f.complete(null));
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.countAll() == 0);
  }

  @Test
  void aStageCompletesIntoTheOutcomeRulesOfABlockingHandler() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = fx.build(fx.builder().listener(counting));
    lm.registerAsync(
        "t.a",
        m ->
            switch (m.idemKey()) {
              case "ok" -> CompletableFuture.completedFuture(null);
              case "later-ok" -> CompletableFuture.runAsync(() -> {});
              case "permanent" ->
                  CompletableFuture.failedFuture(new PermanentFailure("account closed"));
              case "retry-after" ->
                  CompletableFuture.failedFuture(
                      new RetryAfter(Duration.ofHours(2), "rate limited"));
              case "io" ->
                  CompletableFuture.supplyAsync(
                      () -> {
                        throw new CompletionException(new IOException("connection reset"));
                      });
              case "throws" -> throw new IllegalStateException("could not start");
              default -> null;
            },
        EngineFixture.config().backoff(Backoff.fixed(Duration.ofHours(1))).build());
    Map<String, Long> ids = new ConcurrentHashMap<>();
    for (String k : List.of("ok", "later-ok", "permanent", "retry-after", "io", "throws", "null")) {
      ids.put(k, fx.save(lm, action("t.a", k)).id());
    }
    assertThat(lm.runOnce()).isEqualTo(7);
    assertThat(lm.admin().get(ids.get("ok"))).isEmpty();
    assertThat(lm.admin().get(ids.get("later-ok"))).isEmpty();
    MessageView permanent = view(lm, ids.get("permanent"));
    assertThat(permanent.status()).isEqualTo(MessageStatus.DEAD);
    assertThat(permanent.lastError()).contains("account closed");
    MessageView later = view(lm, ids.get("retry-after"));
    assertThat(later.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(later.lastError()).contains("rate limited");
    assertThat(later.nextRetryAt()).isAfter(later.updatedAt().plus(Duration.ofMinutes(119)));
    assertThat(view(lm, ids.get("io")).lastError())
        .as("the wrapper is looked through")
        .contains("IOException")
        .contains("connection reset")
        .doesNotContain("CompletionException");
    assertThat(view(lm, ids.get("throws")).lastError()).contains("could not start");
    assertThat(view(lm, ids.get("null")).lastError()).contains("returned no stage");
    for (String k : List.of("io", "throws", "null")) {
      MessageView v = view(lm, ids.get(k));
      assertThat(v.status()).as(k).isEqualTo(MessageStatus.PENDING);
      assertThat(v.attempts()).as(k).isEqualTo(1);
      assertThat(v.nextRetryAt()).as(k).isAfter(v.updatedAt().plus(Duration.ofMinutes(59)));
    }
    assertThat(counting.count(EngineListener.Result.SUCCESS)).isEqualTo(2);
    assertThat(counting.count(EngineListener.Result.PERMANENT)).isEqualTo(1);
    assertThat(counting.count(EngineListener.Result.RETRY_AFTER)).isEqualTo(1);
    assertThat(counting.count(EngineListener.Result.RETRY)).isEqualTo(3);
  }

  @Test
  void aStageThatCompletesAfterItsTimeoutChangesNothingAndItsMessageWaitsForTheLeaseEnd()
      throws Exception {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm =
        fx.build(fx.builder().lease(Duration.ofSeconds(4)).replicaId("late").listener(counting));
    List<Stubborn> stages = new CopyOnWriteArrayList<>();
    List<java.time.Instant> startedAt = new CopyOnWriteArrayList<>();
    lm.registerAsync(
        "t.a",
        m -> {
          startedAt.add(Sql.instantNow(db, ds));
          Stubborn s = new Stubborn();
          stages.add(s);
          return s;
        },
        EngineFixture.config()
            .handlerTimeout(Duration.ofMillis(300))
            .backoff(Backoff.fixed(Duration.ofMillis(10)))
            .maxAttempts(5)
            .build());
    SaveResult saved = fx.save(lm, action("t.a", "k"));
    lm.start();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> String.valueOf(view(lm, saved.id()).lastError()).contains("timed out"));
    MessageView timedOut = view(lm, saved.id());
    assertThat(timedOut.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(timedOut.attempts()).isEqualTo(1);
    assertThat(counting.count(EngineListener.Result.TIMEOUT)).isEqualTo(1);
    // the 10 ms backoff would make it due at once: the stage's effect may still be under way, so
    // it is not due before the lease it was claimed (or renewed) with ends
    assertThat(timedOut.nextRetryAt())
        .as("due again")
        .isAfter(startedAt.get(0).plus(Duration.ofMillis(3_000)));
    long versionAfterTimeout = Sql.count(ds, "SELECT version FROM " + fx.table);
    stages.get(0).complete(null); // the late completion of the first delivery
    assertThat(view(lm, saved.id()).status()).isEqualTo(MessageStatus.PENDING);
    assertThat(Sql.count(ds, "SELECT version FROM " + fx.table)).isEqualTo(versionAfterTimeout);
    // the second delivery starts only once the lease has ended, and then it may finish
    await().atMost(Duration.ofSeconds(15)).until(() -> stages.size() == 2);
    assertThat(startedAt.get(1)).isAfterOrEqualTo(timedOut.nextRetryAt());
    stages.get(1).complete(null);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
    assertThat(counting.count(EngineListener.Result.SUCCESS)).isEqualTo(1);
  }

  @Test
  void aStageThatTimesOutIsCancelledAlsoWhenTheCallThatStartedItOutlivedTheTimeout() {
    LocalMessages lm = fx.build(fx.builder());
    Map<String, CompletableFuture<Void>> stages = new ConcurrentHashMap<>();
    lm.registerAsync(
        "t.a",
        m -> {
          if (m.idemKey().equals("slow-start")) {
            // the call itself runs past the timeout, deaf to the interrupt, then returns a stage
            AbstractHardeningTest.workIgnoringInterrupts(Duration.ofMillis(600));
          }
          CompletableFuture<Void> s = new CompletableFuture<>();
          stages.put(m.idemKey(), s);
          return s;
        },
        // one slot: the second message starts only once the first one's timeout gave it back
        EngineFixture.config()
            .concurrency(1)
            .handlerTimeout(Duration.ofMillis(200))
            .backoff(Backoff.fixed(Duration.ofHours(1)))
            .build());
    long hang = fx.save(lm, action("t.a", "hang")).id();
    long slow = fx.save(lm, action("t.a", "slow-start")).id();
    lm.start();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                String.valueOf(view(lm, hang).lastError()).contains("timed out")
                    && String.valueOf(view(lm, slow).lastError()).contains("timed out"));
    assertThat(stages.get("hang")).as("asked to stop").isCancelled();
    assertThat(stages.get("slow-start")).as("expired as soon as it was returned").isCancelled();
    assertThat(view(lm, slow).attempts()).isEqualTo(1);
    // a backoff that ends after the lease needs no waiting for the lease: the retry is at the
    // backoff and the lease is released, as for a blocking handler's timeout
    for (long id : new long[] {hang, slow}) {
      MessageView v = view(lm, id);
      assertThat(v.nextRetryAt())
          .as("retry of %s", id)
          .isAfter(v.updatedAt().plus(Duration.ofMinutes(59)));
      assertThat(v.leaseOwner()).as("lease of %s", id).isNull();
    }
  }

  @Test
  void aCallThatStartsNoStageGivesItsSlotBackAtOnce() {
    LocalMessages lm = fx.build(fx.builder());
    AtomicInteger calls = new AtomicInteger();
    lm.registerAsync(
        "t.a",
        m -> {
          calls.incrementAndGet();
          if (m.idemKey().startsWith("null")) {
            return null;
          }
          throw new IllegalStateException("could not start");
        },
        // one slot: a call that kept it would leave the others waiting forever
        EngineFixture.config().concurrency(1).backoff(Backoff.fixed(Duration.ofHours(1))).build());
    for (String k : List.of("null-1", "throws-1", "null-2", "throws-2")) {
      fx.save(lm, action("t.a", k));
    }
    lm.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> fx.count("attempts = 1 AND " + due()) == 4);
    assertThat(calls.get()).isEqualTo(4);
  }

  private String due() {
    return "last_error IS NOT NULL AND next_retry_at > " + EngineFixture.nowSql(ds);
  }

  @Test
  void aStageFailedWithAnExecutionExceptionIsJudgedByItsCause() {
    LocalMessages lm = fx.build(fx.builder());
    lm.registerAsync(
        "t.a",
        m ->
            CompletableFuture.failedFuture(
                new java.util.concurrent.ExecutionException(new PermanentFailure("gone"))),
        EngineFixture.config().build());
    long id = fx.save(lm, action("t.a", "k")).id();
    assertThat(lm.runOnce()).isEqualTo(1);
    MessageView v = view(lm, id);
    assertThat(v.status()).isEqualTo(MessageStatus.DEAD);
    assertThat(v.lastError()).isEqualTo("io.localmessage.PermanentFailure: gone");
  }

  @Test
  void closeGivesUpOnAPendingStageAndAsksItToStopWhileItsMessageKeepsItsLease() {
    LocalMessages lm =
        fx.build(
            fx.builder()
                .replicaId("closing")
                .lease(Duration.ofSeconds(30))
                .shutdownTimeout(Duration.ofMillis(200)));
    CompletableFuture<Void> stage = new CompletableFuture<>();
    CountDownLatch called = new CountDownLatch(1);
    lm.registerAsync(
        "t.a",
        m -> {
          called.countDown();
          return stage;
        },
        EngineFixture.config().build());
    fx.save(lm, action("t.a", "k"));
    lm.start();
    // the handler's call, not only the claim: a claim whose call had not started is released
    await().atMost(Duration.ofSeconds(5)).until(() -> called.getCount() == 0);
    long t0 = System.nanoTime();
    lm.close();
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    assertThat(stage).isCancelled();
    assertThat(took)
        .as(
            "close waits the shutdown timeout (200 ms) for the stage, but not the 1 s grace given"
                + " to interrupted threads: no thread is inside and the stage is not interrupted")
        .isLessThan(Duration.ofMillis(1_200));
    assertThat(
            fx.count("status = 0 AND attempts = 0 AND next_retry_at > " + EngineFixture.nowSql(ds)))
        .as("the lease kept, the attempt given back")
        .isEqualTo(1);
  }

  /**
   * Another replica took the message over (as if this one had been frozen past its lease): the
   * renewal finds it gone, the pending stage is asked to stop as a blocking handler would be
   * interrupted, its slot goes back, and its outcome is dropped: the other replica's claim stands.
   */
  @Test
  void aPendingStageWhoseMessageWasTakenOverIsCancelledAndItsSlotGoesBack() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm =
        fx.build(
            fx.builder()
                .replicaId("a")
                .concurrency(1)
                .lease(Duration.ofMillis(1200))
                .pollInterval(Duration.ofMillis(100))
                .listener(counting));
    Map<String, CompletableFuture<Void>> stages = new ConcurrentHashMap<>();
    lm.registerAsync(
        "t.f",
        m -> {
          CompletableFuture<Void> f = new CompletableFuture<>();
          stages.put(m.idemKey(), f);
          return f;
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(30)).build());
    SaveResult s = fx.save(lm, action("t.f", "taken"));
    lm.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> stages.containsKey("taken"));
    await().atMost(Duration.ofSeconds(5)).until(() -> counting.renewed.get() >= 1);
    io.localmessage.spi.Dialect d = io.localmessage.spi.Dialects.detect(ds);
    Sql.update(
        ds,
        "UPDATE "
            + fx.table
            + " SET version = version + 1, lease_owner = 'other', attempts = attempts + 1,"
            + " next_retry_at = "
            + d.plusMillis(d.now())
            + " WHERE id = ?",
        60_000L,
        s.id());
    await().atMost(Duration.ofSeconds(5)).until(() -> counting.fenced.get() == 1);
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(stages.get("taken")).as("asked to stop").isCancelled());
    // the one slot came back: a second message runs on this replica
    fx.save(lm, action("t.f", "next"));
    await().atMost(Duration.ofSeconds(5)).until(() -> stages.containsKey("next"));
    stages.get("next").complete(null);
    await().atMost(Duration.ofSeconds(5)).until(() -> fx.count("idem_key = 'next'") == 0);
    MessageView taken = view(lm, s.id());
    assertThat(taken.leaseOwner()).as("the other replica's claim stands").isEqualTo("other");
    assertThat(taken.status()).isEqualTo(MessageStatus.PENDING);
    assertThat(counting.casConflicts.get()).as("dropped before any write-back").isZero();
  }

  @Test
  void aPendingStageKeepsItsLeaseRenewedPastTheLeaseLength() {
    EngineFixture.Counting counting = new EngineFixture.Counting();
    LocalMessages lm = fx.build(fx.builder().lease(Duration.ofSeconds(2)).listener(counting));
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<Void> stage = new CompletableFuture<>();
    lm.registerAsync(
        "t.a",
        m -> {
          calls.incrementAndGet();
          return stage;
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(20)).build());
    LocalMessages other = fx.build(fx.builder().replicaId("other"));
    other.registerAsync(
        "t.a",
        m -> {
          calls.incrementAndGet();
          return CompletableFuture.completedFuture(null);
        },
        EngineFixture.config().build());
    fx.save(lm, action("t.a", "k"));
    lm.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> calls.get() == 1);
    other.start();
    // three lease lengths: without renewal the other replica would have taken it over
    await().atMost(Duration.ofSeconds(20)).until(() -> counting.renewed.get() >= 4);
    assertThat(calls.get()).as("deliveries").isEqualTo(1);
    stage.complete(null);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.countAll() == 0);
    assertThat(calls.get()).isEqualTo(1);
  }

  @Test
  void closeWithThousandsOfPendingStagesKeepsTheirLeasesAndLeavesNoThreadBehind() {
    int n = 2_000;
    LocalMessages lm =
        fx.build(
            fx.builder()
                .replicaId("closing")
                .concurrency(n)
                .lease(Duration.ofSeconds(30))
                .shutdownTimeout(Duration.ofMillis(500)));
    AtomicInteger pending = new AtomicInteger();
    lm.registerAsync(
        "t.a",
        m -> {
          pending.incrementAndGet();
          return new Stubborn();
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(20)).build());
    fx.saveMany(lm, "t.a", n, null);
    lm.start();
    await().atMost(Duration.ofSeconds(30)).until(() -> pending.get() == n);
    long start = System.nanoTime();
    lm.close();
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as("close with %s stages that never complete", n)
        .isLessThan(Duration.ofSeconds(15));
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(
                        Thread.getAllStackTraces().keySet().stream()
                            .filter(t -> t.isAlive() && t.getName().contains("-closing")))
                    .as("threads of the closed engine")
                    .isEmpty());
    // their effects may still happen: nobody may run them before their leases end, and the
    // attempt is given back
    assertThat(fx.count("status = 0 AND attempts = 0")).isEqualTo(n);
    assertThat(fx.count("status = 0 AND next_retry_at > " + EngineFixture.nowSql(ds))).isEqualTo(n);
  }

  @Test
  void aTypeWhoseStagesHangDoesNotStallTheOthers() {
    LocalMessages lm = fx.build(fx.builder().concurrency(50));
    AtomicInteger hung = new AtomicInteger();
    lm.registerAsync(
        "t.hung",
        m -> {
          hung.incrementAndGet();
          return new CompletableFuture<>();
        },
        EngineFixture.config().concurrency(10).handlerTimeout(Duration.ofSeconds(20)).build());
    lm.registerAsync(
        "t.ok", m -> CompletableFuture.runAsync(() -> {}), EngineFixture.config().build());
    fx.saveMany(lm, "t.hung", 100, null);
    fx.saveMany(lm, "t.ok", 300, null);
    lm.start();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> fx.count("biz_type = 't.ok'") == 0 && hung.get() == 10);
    assertThat(hung.get()).as("hung stages: the type's concurrency").isEqualTo(10);
  }

  @Test
  void virtualThreadsRunBlockingHandlersWhereTheJvmHasThem() throws Exception {
    if (Runtime.version().feature() < 21) {
      assertThatThrownBy(() -> fx.builder().virtualThreads(true))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("needs Java 21 or later")
          .hasMessageContaining(Runtime.version().toString());
      return;
    }
    int n = 400;
    LocalMessages lm =
        fx.build(fx.builder().replicaId("virtual").concurrency(n).virtualThreads(true));
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger virtual = new AtomicInteger();
    lm.register(
        "t.a",
        m -> {
          if ((boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread())) {
            virtual.incrementAndGet();
          }
          inside.incrementAndGet();
          release.await(); // blocking, as a JDBC or socket call would
        },
        EngineFixture.config().handlerTimeout(Duration.ofSeconds(30)).build());
    fx.saveMany(lm, "t.a", n, null);
    lm.start();
    try {
      await().atMost(Duration.ofSeconds(30)).until(() -> inside.get() == n);
      assertThat(virtual.get()).isEqualTo(n);
      long platform =
          Thread.getAllStackTraces().keySet().stream()
              .filter(t -> t.getName().startsWith("lm-worker-virtual"))
              .count();
      assertThat(platform).as("platform worker threads").isZero();
    } finally {
      release.countDown();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.countAll() == 0);
  }
}
