package io.localmessage.admin;

import java.time.Duration;

/**
 * Backlog of one biz type, by the database clock.
 *
 * @param pending PENDING tickets (due, waiting, or in flight)
 * @param dueNow PENDING tickets whose due time has come and that nobody holds
 * @param inFlight PENDING tickets under a live lease
 * @param dead DEAD tickets
 * @param canceled CANCELED tickets still kept
 * @param succeeded SUCCEEDED tickets still kept (retention)
 * @param oldestPendingAge age of the oldest PENDING ticket, {@code ZERO} if none
 * @param oldestDeadAge age of the oldest DEAD ticket, {@code ZERO} if none
 * @param paused whether the type is paused cluster-wide
 */
public record TypeStats(
    String bizType,
    long pending,
    long dueNow,
    long inFlight,
    long dead,
    long canceled,
    long succeeded,
    Duration oldestPendingAge,
    Duration oldestDeadAge,
    boolean paused) {}
