package io.localmessage.spi;

import java.time.Instant;

/**
 * A ticket as claimed: {@code attempts} and {@code version} are the values after the claim, {@code
 * dbNow} the database clock at claim time, {@code ageFrom} where the ticket's age (limited by
 * {@code maxAge}) counts from: its last requeue by an operator, else its creation.
 */
public record ClaimedRow(
    long id,
    int kind,
    String bizType,
    String idemKey,
    String aggregateId,
    String destination,
    byte[] payload,
    String headersJson,
    int attempts,
    int maxAttempts,
    long version,
    Instant createdAt,
    Instant dbNow,
    boolean leaseExpired,
    Instant ageFrom) {}
