package io.localmessage;

import java.time.Instant;

/**
 * An operator action refused because a replica is delivering the ticket right now (it holds a live
 * lease). Cancelling it would not stop the delivery already under way, and for an ordered type it
 * would let the next ticket of the aggregate start while this one still runs. Pause the type, or
 * wait for the outcome, then act.
 */
public class TicketInFlightException extends LocalMessageException {
  private static final long serialVersionUID = 1L;

  private final long ticketId;
  private final String leaseOwner;
  private final Instant leaseEnd;

  public TicketInFlightException(long ticketId, String leaseOwner, Instant leaseEnd) {
    super(
        "ticket "
            + ticketId
            + " is being delivered by replica "
            + leaseOwner
            + " (lease until "
            + leaseEnd
            + "): cancelling it now would not stop that delivery; pause the type or wait for"
            + " the outcome, then cancel");
    this.ticketId = ticketId;
    this.leaseOwner = leaseOwner;
    this.leaseEnd = leaseEnd;
  }

  /** The ticket that is in flight. */
  public long ticketId() {
    return ticketId;
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
