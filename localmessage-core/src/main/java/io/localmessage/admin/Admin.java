package io.localmessage.admin;

import io.localmessage.MessageStatus;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Operator actions and queries. Every mutating action is recorded in the audit table with the
 * operator and the reason, and is a version-checked transition like any worker's: an in-flight
 * delivery of a cancelled message cannot bring it back.
 */
public interface Admin {

  /** Stops claiming {@code bizType} on every replica (within one poll interval). */
  void pause(String bizType, String operator, String reason);

  /** Lets every replica claim {@code bizType} again (within one poll interval). */
  void resume(String bizType, String operator, String reason);

  /** Biz types paused cluster-wide. */
  List<String> paused();

  /**
   * Cancels a PENDING or DEAD message: no further tries, nothing undone. Returns false when the
   * message does not exist or is SUCCEEDED/CANCELED.
   *
   * @throws io.localmessage.MessageInFlightException when a replica holds a live lease on the
   *     message (it is being delivered right now): the delivery under way cannot be stopped, and
   *     for an ordered type the next message of the aggregate would start beside it. Pause the type
   *     or wait for the outcome, then cancel.
   */
  boolean cancel(long id, String operator, String reason);

  /**
   * Puts DEAD messages back to PENDING, due now, attempts reset; a requeued message's age, which
   * the type's {@code maxAge} limits, counts from the requeue. Any number of ids may be given: they
   * are requeued in transactions of at most 1,000, each committed (and audited) on its own, so a
   * failure part-way leaves the earlier ones requeued. Returns how many moved.
   */
  int requeueDead(Collection<Long> ids, String operator, String reason);

  /**
   * Requeues every message of {@code bizType} that was DEAD when the call started, each once, in
   * batches: one that dies again meanwhile, or dies only after the start, is left alone. Returns
   * how many moved.
   */
  int requeueAllDead(String bizType, String operator, String reason);

  /** Backlog per biz type present in the table or paused. */
  List<TypeStats> stats();

  /** DEAD messages of {@code bizType} (null: all types) with id above {@code afterId}, by id. */
  List<MessageView> listDead(String bizType, long afterId, int limit);

  /** One message, or empty when it does not exist (any more). */
  Optional<MessageView> get(long id);

  /** The payload of a message, or empty when the message does not exist. */
  Optional<byte[]> payload(long id);

  /** Messages of an aggregate, oldest first (at most {@code limit}). */
  List<MessageView> findByAggregate(String aggregateId, int limit);

  /** Messages with this idempotency key across biz types. */
  List<MessageView> findByIdemKey(String idemKey);

  /** The audit trail of one message, oldest first. */
  List<AuditEntry> audit(long messageId);

  /**
   * Deletes messages in terminal {@code status} last updated more than {@code olderThan} ago, one
   * biz type after the other, in statements of at most the engine's purge batch size, each its own
   * short transaction served by an index (it never scans the table or locks the PENDING messages
   * workers claim). Returns how many were deleted.
   *
   * <p>A DEAD message that a later PENDING or DEAD message of its aggregate waits behind (the head
   * of an ordered aggregate) is kept: deleting it would release the next message with no decision
   * on this one. The purge logs how many it kept ({@code event=purge_kept_dead_heads}); {@link
   * #cancel} (which releases the next message, audited) or {@link #requeueDead} decides them.
   */
  int purge(MessageStatus status, Duration olderThan);

  /** Deletes inbox rows older than {@code olderThan}: the end of their duplicate window. */
  int purgeInbox(Duration olderThan);
}
