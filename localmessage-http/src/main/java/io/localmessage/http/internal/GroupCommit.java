package io.localmessage.http.internal;

import io.localmessage.LocalMessageException;
import io.localmessage.http.IdempotentReceiver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Lets requests handled at the same time share transactions, without a thread of its own. A request
 * that arrives while fewer than {@code maxGroups} groups run leads a group at once: it takes the
 * requests waiting (up to {@code maxRequests}, itself first), applies them together and, when
 * requests arrived meanwhile, hands the lead to the oldest of them. Only when {@code maxGroups}
 * groups run does a request wait, and then it joins the next group. So at low load every request is
 * a group of its own, as without group commit, and under load the groups grow instead of the queue.
 * Not API.
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

  private final int maxRequests;
  private final int maxGroups;
  private final Applier applier;

  /** Requests not taken by a group yet, oldest first; some may hold the lead already. */
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();

  private int leaders;

  public GroupCommit(int maxRequests, int maxGroups, Applier applier) {
    this.maxRequests = maxRequests;
    this.maxGroups = maxGroups;
    this.applier = applier;
  }

  public int maxRequests() {
    return maxRequests;
  }

  public int maxGroups() {
    return maxGroups;
  }

  /** Requests waiting for a group to take them (not leading one). */
  public synchronized int waiting() {
    int n = 0;
    for (Pending p : queue) {
      n += p.lead ? 0 : 1;
    }
    return n;
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
      if (leaders < maxGroups) {
        leaders++;
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
    lead(me);
    synchronized (this) {
      return result(me);
    }
  }

  /** Applies {@code me} and the requests waiting without a lead, then hands over. */
  private void lead(Pending me) {
    List<Pending> group = new ArrayList<>();
    synchronized (this) {
      queue.remove(me);
      group.add(me);
      for (Iterator<Pending> it = queue.iterator(); it.hasNext() && group.size() < maxRequests; ) {
        Pending p = it.next();
        if (!p.lead) {
          it.remove();
          group.add(p);
        }
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
    Pending next = null;
    for (Pending p : queue) {
      if (!p.lead) {
        next = p;
        break;
      }
    }
    if (next == null) {
      leaders--;
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
