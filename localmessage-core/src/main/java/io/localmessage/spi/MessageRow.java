package io.localmessage.spi;

import io.localmessage.MessageKind;

/**
 * A validated message ready to insert.
 *
 * @param kind action or event
 * @param bizType the biz type
 * @param idemKey the idempotency key
 * @param aggregateId the ordering key, or {@code null}
 * @param destination the target, or {@code null}
 * @param payload the payload bytes (never {@code null})
 * @param headersJson the encoded headers ({@link io.localmessage.MessageHeaders}), or {@code null}
 * @param maxAttempts the attempt cap; {@code 0} means "not resolved yet": the claiming replica's
 *     cap is written at the first claim
 * @param delayMillis how long after the insert (database clock) the message becomes due
 */
public record MessageRow(
    MessageKind kind,
    String bizType,
    String idemKey,
    String aggregateId,
    String destination,
    byte[] payload,
    String headersJson,
    int maxAttempts,
    long delayMillis) {}
