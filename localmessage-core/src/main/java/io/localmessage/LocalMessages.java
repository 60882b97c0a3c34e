package io.localmessage;

import io.localmessage.admin.Admin;
import java.sql.Connection;
import java.util.Collection;
import java.util.List;
import javax.sql.DataSource;

/**
 * The entry point: saves messages in the caller's transaction and runs their handlers until each
 * side effect is done, dead or cancelled.
 *
 * <p>Guarantees: a message saved in a committed transaction is delivered at least once to the
 * handler of its biz type on some replica, unless an operator cancels it; it is never delivered
 * while another delivery of it holds a live lease; a delivery whose lease ran out cannot overwrite
 * the outcome of a newer one. It does <em>not</em> guarantee exactly-once delivery: handlers must
 * be idempotent on {@link Message#idemKey()} and consumers should use the inbox.
 *
 * <p>Build one per service and share it; it is thread-safe. Configuration is sealed at {@link
 * #start()}: handlers are registered before.
 */
public interface LocalMessages extends AutoCloseable {

  /** A builder on the service's {@link DataSource}; the dialect is detected from it. */
  static LocalMessagesBuilder builder(DataSource dataSource) {
    return new LocalMessagesBuilder(dataSource);
  }

  /** Registers the handler of {@code bizType}; only registered types are claimed here. */
  LocalMessages register(String bizType, Handler handler, HandlerConfig config);

  /** Registers a batch handler of {@code bizType} (the Kafka relay is one). */
  LocalMessages registerBatch(String bizType, BatchHandler handler, HandlerConfig config);

  /**
   * Registers an asynchronous handler of {@code bizType}: its stage holds the message's slot, not a
   * thread, until it completes (see {@link AsyncHandler} for the timeout and lease rules).
   */
  LocalMessages registerAsync(String bizType, AsyncHandler handler, HandlerConfig config);

  /** Starts the poller and the workers. Without it the engine only runs on {@link #runOnce()}. */
  void start();

  /**
   * Saves a message through {@code connection}, inside the caller's transaction: never commits,
   * rolls back or changes autocommit. Throws {@link TransactionRequiredException} on an autocommit
   * connection and {@link IllegalArgumentException} for bad input, in both cases writing nothing. A
   * message whose {@code (biz_type, idem_key)} exists is a no-op reported by {@link
   * SaveResult#duplicate()}; the transaction stays usable.
   *
   * <p>The duplicate window is the existing message's lifetime plus its retention: once a succeeded
   * message is deleted (at once by default), the same key can be saved again. That is why handlers
   * and consumers must be idempotent themselves.
   */
  SaveResult save(Connection connection, NewMessage message);

  /** {@link #save} for several messages in the same transaction, in order. */
  List<SaveResult> saveAll(Connection connection, List<NewMessage> messages);

  /**
   * Opens a transaction on the engine's data source, runs {@code work}, commits, then dispatches
   * the messages saved in it at once on this replica when slots are free (the poller remains the
   * safety net). Rolls back and rethrows when {@code work} throws anything, errors included
   * (checked exceptions come wrapped in {@link LocalMessageException}). When the work caught an SQL
   * error after which the database will not commit (any error on PostgreSQL, a deadlock
   * everywhere), rolls back and throws {@link TransactionAbortedException}: run a statement whose
   * error is expected under a savepoint. The work must not commit, roll back, close the connection
   * or turn autocommit on: the library ends its transaction (design 8.18).
   */
  <T> T inTransaction(ConnectionCallback<T> work);

  /**
   * The weaker, "independent retry store" mode: saves the message in its own short transaction on
   * the engine's data source, after the business commit instead of inside it. Use it only for
   * low-risk actions: if the process dies between the business commit and this call, the intent is
   * lost.
   */
  SaveResult saveDetached(NewMessage message);

  /**
   * Hint that messages were committed: claims those still due at once, within free slots. Used by
   * the after-commit fast path; messages not claimed here are left to the poller.
   */
  void dispatchNow(Collection<Long> messageIds);

  /**
   * Manual mode: claims due messages of the registered, unpaused types within free slots, runs them
   * and waits for their write-backs. Returns how many were delivered. For tests and tools; it works
   * whether or not the engine was started.
   */
  int runOnce();

  /**
   * The state of the engine's background loops (poller, writer, timeout watchdog, lease renewer,
   * maintenance): when each last succeeded and whether one is stuck.
   */
  EngineHealth health();

  /** Operator actions and queries. */
  Admin admin();

  /** The DDL of this engine's tables for its dialect, with its table names. */
  String schemaDdl();

  /** The replica id written as {@code lease_owner}. */
  String replicaId();

  /**
   * Graceful stop: stops claiming, waits for in-flight handlers up to the shutdown timeout and
   * writes back their outcomes. Handlers still running then are interrupted; those that leave the
   * handler within a short grace give their attempt back and their messages are due at once on
   * another replica (a handler that returned normally is still recorded as a success). A handler
   * that ignores the interrupt keeps its message's lease until the lease ends, so no other replica
   * runs the message while it may still be running here; its attempt is given back and its late
   * outcome is dropped. Leases are not renewed after close.
   */
  @Override
  void close();
}
