package io.localmessage.admin;

import java.time.Instant;

/**
 * One recorded operator action, a row of the audit table.
 *
 * @param id the audit row's id
 * @param messageId the message acted on; {@code null} for type-wide actions (pause, resume). Stored
 *     in the column {@code ticket_id}
 * @param bizType the biz type
 * @param action {@code CANCEL}, {@code REQUEUE}, {@code PAUSE} or {@code RESUME}
 * @param operator who did it
 * @param reason why
 * @param at when (database clock)
 */
public record AuditEntry(
    long id,
    Long messageId,
    String bizType,
    String action,
    String operator,
    String reason,
    Instant at) {}
