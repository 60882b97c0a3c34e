package io.localmessage;

import java.time.Instant;
import java.util.Map;

/** A claimed ticket as a handler sees it. Immutable. */
public interface Message {
  long id();

  MessageKind kind();

  String bizType();

  /** The stable identity of the side effect: pass it on as the idempotency key. */
  String idemKey();

  /** Ordering key / Kafka record key; may be {@code null}. */
  String aggregateId();

  /** Topic, URL or handler-specific target; may be {@code null}. */
  String destination();

  /** The payload bytes (a copy); empty when none was saved. */
  byte[] payload();

  /** Small string headers saved with the ticket (content type, trace id ...). */
  Map<String, String> headers();

  /** 1 for the first delivery, counted when the ticket was claimed. */
  int attempt();

  int maxAttempts();

  /** When the ticket was saved, by the database clock. */
  Instant createdAt();
}
