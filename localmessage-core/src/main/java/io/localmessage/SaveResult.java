package io.localmessage;

/**
 * What {@code save} did.
 *
 * @param id the message's id: the new row, or the existing row with the same {@code (biz_type,
 *     idem_key)} when {@code duplicate} is true ({@code -1} if that row vanished meanwhile)
 * @param duplicate true when a message with the same {@code (biz_type, idem_key)} already existed;
 *     nothing was written and the caller's transaction is still usable
 * @param bizType the biz type of the message
 * @param idemKey the idempotency key of the message
 */
public record SaveResult(long id, boolean duplicate, String bizType, String idemKey) {}
