package io.localmessage.internal.engine;

import io.localmessage.MessageStatus;
import io.localmessage.spi.Transition;

/**
 * What to write for one claimed message: delete it (a success kept for no retention) or apply a
 * version-checked transition. Both match only while the row has the claim's version and is PENDING.
 */
sealed interface WriteBack {
  long id();

  long version();

  /** A success without retention: the row goes. */
  record Delete(long id, long version) implements WriteBack {}

  /** Any other outcome: the row moves to the transition's status. */
  record Update(Transition transition) implements WriteBack {
    @Override
    public long id() {
      return transition.id();
    }

    @Override
    public long version() {
      return transition.version();
    }

    /** Whether the message becomes due again on its own (not a kept lease): when, in ms. */
    boolean makesDue() {
      return transition.status() == MessageStatus.PENDING && !transition.keepLease();
    }
  }
}
