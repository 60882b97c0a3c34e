package io.localmessage.spring.internal;

import io.localmessage.LocalMessages;
import io.localmessage.SaveResult;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Collects the ids of the messages saved in one transaction and hands them to the engine right
 * after the commit. One per engine and transaction; found among the current transaction's
 * synchronizations, so a suspended outer transaction keeps its own. Not API.
 */
public final class AfterCommitDispatch implements TransactionSynchronization {
  private static final Logger log = LoggerFactory.getLogger(AfterCommitDispatch.class);

  private final LocalMessages engine;
  private final List<Long> ids = new ArrayList<>();

  private AfterCommitDispatch(LocalMessages engine) {
    this.engine = engine;
  }

  /** The collector of the current transaction, registered on first use. */
  public static AfterCommitDispatch current(LocalMessages engine) {
    for (TransactionSynchronization s : TransactionSynchronizationManager.getSynchronizations()) {
      if (s instanceof AfterCommitDispatch d && d.engine == engine) {
        return d;
      }
    }
    AfterCommitDispatch d = new AfterCommitDispatch(engine);
    TransactionSynchronizationManager.registerSynchronization(d);
    return d;
  }

  public void add(List<SaveResult> results) {
    for (SaveResult r : results) {
      if (!r.duplicate()) {
        ids.add(r.id());
      }
    }
  }

  @Override
  public void afterCommit() {
    if (ids.isEmpty()) {
      return;
    }
    try {
      engine.dispatchNow(List.copyOf(ids));
    } catch (RuntimeException e) {
      // the commit happened; the poller delivers what the fast path could not
      log.warn("event=after_commit_dispatch_failed tickets={} error={}", ids.size(), e.toString());
    }
  }
}
