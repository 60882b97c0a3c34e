package io.localmessage.kafka;

/**
 * The Kafka record headers the relay writes on every event, all as UTF-8 text. A message header
 * with one of these names is not copied: the relay's value wins.
 */
public final class RelayHeaders {
  /** The message's idempotency key: the identity of the event across re-sends. */
  public static final String EVENT_ID = "lm-event-id";

  /** The message's biz type, e.g. {@code deposit.paid}. */
  public static final String BIZ_TYPE = "lm-biz-type";

  /** The message's id in the producing service's table (diagnostics only). */
  public static final String TICKET_ID = "lm-ticket-id";

  /** When the message was saved, in epoch milliseconds by the producer's database clock. */
  public static final String CREATED_AT = "lm-created-at";

  private RelayHeaders() {}

  /** Whether {@code name} is one of the headers the relay owns. */
  public static boolean isReserved(String name) {
    return EVENT_ID.equals(name)
        || BIZ_TYPE.equals(name)
        || TICKET_ID.equals(name)
        || CREATED_AT.equals(name);
  }
}
