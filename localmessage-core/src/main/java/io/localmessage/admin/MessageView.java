package io.localmessage.admin;

import io.localmessage.MessageKind;
import io.localmessage.MessageStatus;
import java.time.Instant;
import java.util.Map;

/**
 * A message (a row of the message table) as an operator sees it. The payload is given by size only;
 * see {@link Admin#payload}.
 *
 * @param id the message's id
 * @param kind action or event
 * @param bizType the biz type that selects the handler
 * @param idemKey the idempotency key, unique within the biz type
 * @param aggregateId the ordering key, or {@code null}
 * @param destination the topic, URL or handler-specific target, or {@code null}
 * @param payloadBytes the payload's size in bytes
 * @param headers the saved headers; a row whose headers cannot be decoded shows one entry saying so
 * @param status the message's state
 * @param attempts deliveries started so far
 * @param maxAttempts the attempt cap ({@code 0}: not resolved yet, set at the first claim)
 * @param nextRetryAt when the message is due; while it is leased, the lease end (database clock)
 * @param leaseOwner the replica that claimed it last, while the claim holds, else {@code null}
 * @param version bumped on every claim and transition
 * @param lastError the redacted summary of the last failure, or {@code null}
 * @param createdAt when it was saved (database clock)
 * @param updatedAt when it last changed (database clock)
 */
public record MessageView(
    long id,
    MessageKind kind,
    String bizType,
    String idemKey,
    String aggregateId,
    String destination,
    int payloadBytes,
    Map<String, String> headers,
    MessageStatus status,
    int attempts,
    int maxAttempts,
    Instant nextRetryAt,
    String leaseOwner,
    long version,
    String lastError,
    Instant createdAt,
    Instant updatedAt) {}
