package io.localmessage;

/**
 * The states of a message. Stored in the {@code status} column; the stored values are the dialect's
 * business, see the schema scripts.
 */
public enum MessageStatus {
  /** Waiting to run, running under a lease, or waiting for its next retry. */
  PENDING,
  /** The handler succeeded; kept only while the type's retention lasts. */
  SUCCEEDED,
  /** Permanent failure, attempts exhausted or max age passed: waits for an operator. */
  DEAD,
  /** Stopped by an operator; nothing was undone. */
  CANCELED;

  /** Whether no worker will ever run a message in this state again (unless requeued). */
  public boolean isTerminal() {
    return this != PENDING;
  }
}
