package io.localmessage.http.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessageException;
import io.localmessage.http.IdempotentReceiver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The grouping of {@link GroupCommit} without a database: groups held inside their transaction by a
 * latch, so who waits and who leads is certain.
 */
class GroupCommitTest {
  private final ExecutorService threads =
      Executors.newFixedThreadPool(16, r -> new Thread(r, "group-commit-test"));

  @AfterEach
  void stop() throws InterruptedException {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /** An applier that records each group and holds it until {@code gate} opens. */
  private static final class Held implements GroupCommit.Applier {
    final CountDownLatch gate = new CountDownLatch(1);
    final List<Integer> groups = new CopyOnWriteArrayList<>();
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger mostRunning = new AtomicInteger();

    @Override
    public List<IdempotentReceiver.Outcome> apply(List<IdempotentReceiver.Request> requests)
        throws Exception {
      mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
      try {
        groups.add(requests.size());
        assertThat(gate.await(30, TimeUnit.SECONDS)).isTrue();
        List<IdempotentReceiver.Outcome> out = new ArrayList<>();
        for (IdempotentReceiver.Request r : requests) {
          if (r.idempotencyKey().equals("bad")) {
            throw new IllegalStateException("the transaction failed");
          }
          out.add(new IdempotentReceiver.Outcome(IdempotentReceiver.Result.APPLIED, null));
        }
        return out;
      } finally {
        running.decrementAndGet();
      }
    }
  }

  private static IdempotentReceiver.Request request(String key) {
    return new IdempotentReceiver.Request(key, c -> {});
  }

  @Test
  void requestsThatWaitWhileTheGroupsRunShareTheNextTransactions() throws Exception {
    Held held = new Held();
    GroupCommit gc = new GroupCommit(50, 3, held);
    List<Future<IdempotentReceiver.Outcome>> outs = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      String key = "k" + i;
      outs.add(threads.submit(() -> gc.apply(request(key), 30_000)));
    }
    // three requests lead a transaction each, the 13 others wait behind them
    await().atMost(30, TimeUnit.SECONDS).until(() -> held.groups.size() == 3 && gc.waiting() == 13);
    assertThat(held.groups).containsOnly(1);
    held.gate.countDown();
    for (Future<IdempotentReceiver.Outcome> f : outs) {
      assertThat(f.get(30, TimeUnit.SECONDS).result()).isEqualTo(IdempotentReceiver.Result.APPLIED);
    }
    assertThat(held.groups.stream().mapToInt(Integer::intValue).sum()).isEqualTo(16);
    // each of the three leaders hands over at most once: the 13 went in at most 3 transactions
    assertThat(held.groups).hasSizeLessThanOrEqualTo(6);
    assertThat(held.mostRunning.get()).isLessThanOrEqualTo(3);
    assertThat(gc.waiting()).isZero();
  }

  @Test
  void aFailedTransactionFailsItsRequestsAndTheNextGroupStillRuns() throws Exception {
    Held held = new Held();
    GroupCommit gc = new GroupCommit(50, 1, held);
    Future<IdempotentReceiver.Outcome> first = threads.submit(() -> gc.apply(request("a"), 30_000));
    await().atMost(30, TimeUnit.SECONDS).until(() -> held.groups.size() == 1);
    // these two wait and share the next transaction, which fails as a whole
    Future<IdempotentReceiver.Outcome> bad = threads.submit(() -> gc.apply(request("bad"), 30_000));
    Future<IdempotentReceiver.Outcome> other = threads.submit(() -> gc.apply(request("b"), 30_000));
    await().atMost(30, TimeUnit.SECONDS).until(() -> gc.waiting() == 2);
    held.gate.countDown();
    assertThat(first.get(30, TimeUnit.SECONDS).result())
        .isEqualTo(IdempotentReceiver.Result.APPLIED);
    for (Future<IdempotentReceiver.Outcome> f : List.of(bad, other)) {
      assertThatThrownBy(() -> f.get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalStateException.class)
          .hasMessageContaining("the transaction failed");
    }
    assertThat(held.groups).containsExactly(1, 2);
    // nothing is left leading: a new request runs at once
    assertThat(gc.apply(request("c"), 30_000).result())
        .isEqualTo(IdempotentReceiver.Result.APPLIED);
  }

  @Test
  void aRequestThatWaitsTooLongGivesUpAndIsNeverApplied() throws Exception {
    Held held = new Held();
    GroupCommit gc = new GroupCommit(50, 1, held);
    Future<IdempotentReceiver.Outcome> first = threads.submit(() -> gc.apply(request("a"), 30_000));
    await().atMost(30, TimeUnit.SECONDS).until(() -> held.groups.size() == 1);
    assertThatThrownBy(() -> gc.apply(request("late"), 50))
        .isInstanceOf(LocalMessageException.class)
        .hasMessage("waited 50 ms for a group commit to take the request");
    assertThat(gc.waiting()).isZero();
    held.gate.countDown();
    assertThat(first.get(30, TimeUnit.SECONDS).result())
        .isEqualTo(IdempotentReceiver.Result.APPLIED);
    assertThat(held.groups).containsExactly(1);
  }
}
