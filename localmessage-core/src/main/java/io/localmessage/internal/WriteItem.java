package io.localmessage.internal;

import io.localmessage.spi.Transition;

/**
 * One version-checked write-back: a delete (success without retention) when {@code transition} is
 * null, otherwise the transition. {@code onWritten} runs after the statement, matched or not.
 */
record WriteItem(String bizType, long id, long version, Transition transition, Runnable onWritten) {

  boolean isDelete() {
    return transition == null;
  }
}
