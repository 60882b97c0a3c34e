package io.localmessage;

import java.time.Instant;

/**
 * An operator action refused because a replica is delivering the message right now (it holds a live
 * lease). Cancelling it would not stop the delivery already under way, and for an ordered type it
 * would let the next message of the aggregate start while this one still runs. Pause the type, or
 * wait for the outcome, then act.
 */
public class MessageInFlightException extends LocalMessageException {
  private static final long serialVersionUID = 1L;

  private final long messageId;
  private final String leaseOwner;
  private final Instant leaseEnd;

  /**
   * The refusal of an action on {@code messageId}, leased by {@code leaseOwner} until {@code
   * leaseEnd}.
   */
  public MessageInFlightException(long messageId, String leaseOwner, Instant leaseEnd) {
    super(
        "message "
            + messageId
            + " is being delivered by replica "
            + leaseOwner
            + " (lease until "
            + leaseEnd
            + "): cancelling it now would not stop that delivery; pause the type or wait for"
            + " the outcome, then cancel");
    this.messageId = messageId;
    this.leaseOwner = leaseOwner;
    this.leaseEnd = leaseEnd;
  }

  /** The message that is in flight. */
  public long messageId() {
    return messageId;
  }

  /** The replica delivering it. */
  public String leaseOwner() {
    return leaseOwner;
  }

  /** When its lease ends unless the replica renews it (database clock). */
  public Instant leaseEnd() {
    return leaseEnd;
  }
}
