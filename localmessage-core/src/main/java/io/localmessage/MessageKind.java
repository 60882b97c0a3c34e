package io.localmessage;

/** What a ticket stands for. Stored as a SMALLINT code. */
public enum MessageKind {
  /** Call something: a payment channel, another service, a handler with side effects. */
  ACTION(1),
  /** Publish a fact, usually to Kafka through the relay. */
  EVENT(2);

  private final int code;

  MessageKind(int code) {
    this.code = code;
  }

  /** The value stored in the {@code kind} column. */
  public int code() {
    return code;
  }

  /** The kind stored as {@code code}; throws for an unknown code. */
  public static MessageKind ofCode(int code) {
    for (MessageKind k : values()) {
      if (k.code == code) {
        return k;
      }
    }
    throw new IllegalArgumentException("unknown message kind code " + code);
  }
}
