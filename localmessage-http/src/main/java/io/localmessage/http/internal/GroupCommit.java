package io.localmessage.http.internal;

import io.localmessage.LocalMessageException;
import io.localmessage.http.IdempotentReceiver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Lets requests handled at the same time share one transaction, without a thread of its own: the
 * first request to arrive while no group runs leads: it takes every request waiting (up to the
 * maximum, itself first), applies them together and hands the lead to the oldest request that
 * arrived meanwhile, which does the same. A request never waits for others to arrive. Not API.
 */
public final class GroupCommit {
  /** Applies one group in one transaction; throws when the transaction failed as a whole. */
  @FunctionalInterface
  public interface Applier {
    List<IdempotentReceiver.Outcome> apply(List<IdempotentReceiver.Request> requests)
        throws Exception;
  }

  private static final class Pending {
    final IdempotentReceiver.Request request;
    IdempotentReceiver.Outcome outcome;
    Exception error;
    boolean lead;

    Pending(IdempotentReceiver.Request request) {
      this.request = request;
    }

    boolean done() {
      return outcome != null || error != null;
    }
  }

  private final int max;
  private final Applier applier;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private boolean leading;

  public GroupCommit(int max, Applier applier) {
    this.max = max;
    this.applier = applier;
  }

  public int max() {
    return max;
  }

  /**
   * Applies {@code request} in a group; waits at most {@code waitMillis} for a group to take it.
   * Returns its outcome, or throws what failed its group's transaction.
   */
  public IdempotentReceiver.Outcome apply(IdempotentReceiver.Request request, long waitMillis)
      throws Exception {
    Pending me = new Pending(request);
    synchronized (this) {
      queue.add(me);
      if (!leading) {
        leading = true;
        me.lead = true;
      }
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
      while (!me.lead && !me.done()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          queue.remove(me);
          throw new LocalMessageException(
              "waited " + waitMillis + " ms for a group commit to take the request");
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
      if (me.done()) {
        return result(me);
      }
    }
    lead();
    synchronized (this) {
      return result(me);
    }
  }

  /** Applies the requests at the head of the queue (this thread's first), then hands over. */
  private void lead() {
    List<Pending> group = new ArrayList<>();
    synchronized (this) {
      while (group.size() < max && !queue.isEmpty()) {
        group.add(queue.poll());
      }
    }
    List<IdempotentReceiver.Request> requests = new ArrayList<>(group.size());
    group.forEach(p -> requests.add(p.request));
    List<IdempotentReceiver.Outcome> outcomes = null;
    Exception failed = null;
    try {
      outcomes = applier.apply(requests);
    } catch (Exception e) {
      failed = e;
    } catch (Error e) {
      // the waiting requests must not hang: they fail with it, and the lead moves on
      handOver(group, null, new LocalMessageException("the group's transaction failed: " + e, e));
      throw e;
    }
    handOver(group, outcomes, failed);
  }

  private synchronized void handOver(
      List<Pending> group, List<IdempotentReceiver.Outcome> outcomes, Exception failed) {
    for (int i = 0; i < group.size(); i++) {
      Pending p = group.get(i);
      if (failed != null) {
        p.error = failed;
      } else {
        p.outcome = outcomes.get(i);
      }
    }
    Pending next = queue.peek();
    if (next == null) {
      leading = false;
    } else {
      next.lead = true;
    }
    notifyAll();
  }

  private static IdempotentReceiver.Outcome result(Pending p) throws Exception {
    if (p.error != null) {
      throw p.error;
    }
    return p.outcome;
  }
}
