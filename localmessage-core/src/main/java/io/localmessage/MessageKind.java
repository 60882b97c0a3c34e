package io.localmessage;

/** What a message stands for. Stored in the {@code kind} column. */
public enum MessageKind {
  /** Call something: a payment channel, another service, a handler with side effects. */
  ACTION,
  /** Publish a fact, usually to Kafka through the relay. */
  EVENT
}
