package io.localmessage.internal.engine;

import io.localmessage.spi.Transition;
import java.util.function.LongSupplier;

/**
 * One version-checked write-back on its way to the database. It may be retried until its deadline
 * (a reading of the engine's ticker: the lease end minus the write-back margin), then it is
 * dropped. The deadline is read at each check, not fixed at submit time: the lease of an outcome
 * that waits in the queue is still renewed, and its deadline moves with it. {@code onWritten} runs
 * once the item is done with, written, conflicting or dropped.
 */
record WriteItem(String bizType, WriteBack writeBack, Runnable onWritten, LongSupplier deadline) {

  /** An item whose deadline does not move (its lease is not renewed). */
  WriteItem(String bizType, WriteBack writeBack, Runnable onWritten, long deadlineNanos) {
    this(bizType, writeBack, onWritten, () -> deadlineNanos);
  }

  long deadlineNanos() {
    return deadline.getAsLong();
  }

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
    return new WriteItem(bizType, new WriteBack.Update(t), onWritten, deadline);
  }
}
