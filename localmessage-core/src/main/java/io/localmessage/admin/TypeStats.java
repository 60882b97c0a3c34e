package io.localmessage.admin;

import java.time.Duration;

/**
 * Backlog of one biz type, by the database clock.
 *
 * @param pending PENDING messages (due, waiting, or in flight)
 * @param dueNow PENDING messages whose due time has come and that nobody holds
 * @param inFlight PENDING messages under a live lease
 * @param dead DEAD messages
 * @param canceled CANCELED messages still kept
 * @param succeeded SUCCEEDED messages still kept (retention)
 * @param oldestPendingAge age of the oldest PENDING message, {@code ZERO} if none
 * @param oldestDeadAge age of the oldest DEAD message, {@code ZERO} if none
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
