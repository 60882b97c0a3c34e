package io.localmessage.spi;

import io.localmessage.MessageKind;
import java.time.Instant;

/**
 * A message as claimed.
 *
 * @param id the message's id
 * @param kind action or event; {@code null} when the stored value is not one this version knows
 *     (the engine then moves the message to DEAD with the reason)
 * @param bizType the biz type
 * @param idemKey the idempotency key
 * @param aggregateId the ordering key, or {@code null}
 * @param destination the target, or {@code null}
 * @param payload the payload bytes
 * @param headersJson the stored headers as written ({@link io.localmessage.MessageHeaders})
 * @param attempts deliveries started, after the claim
 * @param maxAttempts the attempt cap, after the claim resolved it
 * @param version the version after the claim: every write-back checks it
 * @param createdAt when the message was saved
 * @param dbNow the database clock at claim time
 * @param leaseExpired whether a previous claim's lease ran out without an outcome
 * @param ageFrom where the message's age (limited by {@code maxAge}) counts from: its last requeue
 *     by an operator, else its creation
 */
public record ClaimedRow(
    long id,
    MessageKind kind,
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
