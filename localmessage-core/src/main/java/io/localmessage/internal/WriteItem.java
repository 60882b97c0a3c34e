package io.localmessage.internal;

import io.localmessage.spi.Transition;

/**
 * One version-checked write-back: a delete (success without retention) when {@code transition} is
 * null, otherwise the transition. It may be retried until {@code deadlineNanos} (a {@code
 * System.nanoTime()}: the lease end minus the write-back margin), then it is dropped. {@code
 * onWritten} runs once the item is done with, written, conflicting or dropped.
 */
record WriteItem(
    String bizType,
    long id,
    long version,
    Transition transition,
    Runnable onWritten,
    long deadlineNanos) {

  boolean isDelete() {
    return transition == null;
  }

  WriteItem withTransition(Transition t) {
    return new WriteItem(bizType, id, version, t, onWritten, deadlineNanos);
  }
}
