package io.localmessage.admin;

import io.localmessage.MessageKind;
import io.localmessage.MessageStatus;
import java.time.Instant;
import java.util.Map;

/**
 * A ticket as an operator sees it. The payload is given by size only; see {@link Admin#payload}.
 */
public record TicketView(
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
