package io.localmessage.internal.engine;

import io.localmessage.spi.Transition;

/**
 * One version-checked write-back on its way to the database. It may be retried until {@code
 * deadlineNanos} (a {@code System.nanoTime()}: the lease end minus the write-back margin), then it
 * is dropped. {@code onWritten} runs once the item is done with, written, conflicting or dropped.
 */
record WriteItem(String bizType, WriteBack writeBack, Runnable onWritten, long deadlineNanos) {

  long id() {
    return writeBack.id();
  }

  long version() {
    return writeBack.version();
  }

  boolean isDelete() {
    return writeBack instanceof WriteBack.Delete;
  }

  /** The transition of an update; {@code null} for a delete. */
  Transition transition() {
    return writeBack instanceof WriteBack.Update u ? u.transition() : null;
  }

  WriteItem withTransition(Transition t) {
    return new WriteItem(bizType, new WriteBack.Update(t), onWritten, deadlineNanos);
  }
}
