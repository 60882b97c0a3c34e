package io.localmessage.admin;

import java.time.Instant;

/** One recorded operator action. {@code ticketId} is null for type-wide actions (pause). */
public record AuditEntry(
    long id,
    Long ticketId,
    String bizType,
    String action,
    String operator,
    String reason,
    Instant at) {}
