package io.localmessage;

import java.time.Instant;
import java.util.Map;

/** A claimed message as a handler sees it. Immutable. */
public interface Message {
  /** The message's id, unique in its table. */
  long id();

  /** Action or event. */
  MessageKind kind();

  /** The biz type that selected this handler. */
  String bizType();

  /** The stable identity of the side effect: pass it on as the idempotency key. */
  String idemKey();

  /** Ordering key / Kafka record key; may be {@code null}. */
  String aggregateId();

  /** Topic, URL or handler-specific target; may be {@code null}. */
  String destination();

  /** The payload bytes (a copy); empty when none was saved. */
  byte[] payload();

  /** Small string headers saved with the message (content type, trace id ...). */
  Map<String, String> headers();

  /** 1 for the first delivery, counted when the message was claimed. */
  int attempt();

  /** The attempt cap that applies: after this attempt a retryable failure makes it DEAD. */
  int maxAttempts();

  /** When the message was saved, by the database clock. */
  Instant createdAt();
}
