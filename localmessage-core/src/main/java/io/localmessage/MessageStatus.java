package io.localmessage;

/** The states of a ticket (DESIGN section 3). Stored as a SMALLINT code. */
public enum MessageStatus {
  /** Waiting to run, running under a lease, or waiting for its next retry. */
  PENDING(0),
  /** The handler succeeded; kept only while the type's retention lasts. */
  SUCCEEDED(1),
  /** Permanent failure, attempts exhausted or max age passed: waits for an operator. */
  DEAD(2),
  /** Stopped by an operator; nothing was undone. */
  CANCELED(3);

  private final int code;

  MessageStatus(int code) {
    this.code = code;
  }

  /** The value stored in the {@code status} column. */
  public int code() {
    return code;
  }

  /** Whether no worker will ever run a ticket in this state again (unless requeued). */
  public boolean isTerminal() {
    return this != PENDING;
  }

  /** The status stored as {@code code}; throws for an unknown code. */
  public static MessageStatus ofCode(int code) {
    for (MessageStatus s : values()) {
      if (s.code == code) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown message status code " + code);
  }
}
