package io.localmessage.spi;

/** A validated ticket ready to insert. {@code headersJson} may be null. */
public record TicketRow(
    int kind,
    String bizType,
    String idemKey,
    String aggregateId,
    String destination,
    byte[] payload,
    String headersJson,
    int maxAttempts,
    long delayMillis) {}
