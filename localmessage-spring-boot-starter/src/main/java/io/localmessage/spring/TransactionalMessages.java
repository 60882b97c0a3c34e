package io.localmessage.spring;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.TransactionRequiredException;
import io.localmessage.spring.internal.AfterCommitDispatch;
import io.localmessage.spring.internal.TransactionBoundConnection;
import io.localmessage.spring.internal.TransactionBoundConnection.Binding;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Saves messages in the current Spring transaction: {@code save(message)} inside a
 * {@code @Transactional} method (or a {@code TransactionTemplate}) writes through the transaction's
 * own connection, so the message commits or rolls back with the business change. The transaction
 * must be one of a {@code DataSourceTransactionManager} (or {@code JdbcTransactionManager}) or a
 * {@code JpaTransactionManager} on the engine's {@link DataSource}: they bind their connection to
 * the transaction when it begins, and the message is written on exactly that connection.
 *
 * <p>Anywhere else it throws {@link TransactionRequiredException}, names the DataSource and writes
 * nothing: with no transaction, a read-only one, or one of another DataSource's transaction manager
 * (where a connection of the engine's DataSource would be outside the transaction, and on a pool
 * with autocommit off never committed at all). A message written outside the business transaction
 * could survive a rolled-back business change or be lost after a committed one. JTA transactions
 * bind no connection in advance and are refused too.
 *
 * <p>After the commit, the messages saved in the transaction are handed to this replica's workers
 * at once (when slots are free); nothing happens on rollback. The poller remains the safety net: a
 * message not dispatched right after the commit is claimed at its next poll, here or elsewhere.
 */
public final class TransactionalMessages {
  private final LocalMessages localMessages;
  private final DataSource dataSource;

  public TransactionalMessages(LocalMessages localMessages, DataSource dataSource) {
    this.localMessages = Objects.requireNonNull(localMessages, "localMessages");
    // the key transaction managers bind the connection under
    this.dataSource =
        TransactionBoundConnection.resourceKey(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * Saves {@code message} in the current transaction. A duplicate {@code (biz_type, idem_key)} is a
   * no-op reported by {@link SaveResult#duplicate()}; the transaction stays usable.
   *
   * @throws TransactionRequiredException when no transaction is active, it is read-only, or it is
   *     not bound to the engine's data source; nothing is written then
   */
  public SaveResult save(NewMessage message) {
    Objects.requireNonNull(message, "message");
    return saveAll(List.of(message)).get(0);
  }

  /** {@link #save} for several messages, in order, in the current transaction. */
  public List<SaveResult> saveAll(List<NewMessage> messages) {
    Objects.requireNonNull(messages, "messages");
    requireWritableTransaction(messages);
    requireBoundConnection(messages);
    Connection connection = DataSourceUtils.getConnection(dataSource);
    try {
      List<SaveResult> results = localMessages.saveAll(connection, messages);
      if (TransactionSynchronizationManager.isSynchronizationActive()) {
        AfterCommitDispatch.current(localMessages).add(results);
      }
      return results;
    } finally {
      DataSourceUtils.releaseConnection(connection, dataSource);
    }
  }

  /** The engine, for what this facade does not cover (admin, manual runs). */
  public LocalMessages localMessages() {
    return localMessages;
  }

  private static void requireWritableTransaction(List<NewMessage> messages) {
    if (!TransactionSynchronizationManager.isActualTransactionActive()) {
      throw new TransactionRequiredException(
          "save needs an active Spring transaction (call it from a @Transactional method or a"
              + " TransactionTemplate); there is none, so "
              + describe(messages)
              + " could outlive a rolled-back business change. Nothing was written.");
    }
    if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
      throw new TransactionRequiredException(
          "save needs a read-write transaction; the current one is read-only. Nothing was"
              + " written.");
    }
  }

  /**
   * Checked before asking {@code DataSourceUtils} for the connection: inside a transaction of
   * another DataSource it would bind a fresh one on demand and hand it out as if it were in the
   * transaction, and nothing ever commits it.
   */
  private void requireBoundConnection(List<NewMessage> messages) {
    Binding binding = TransactionBoundConnection.current(dataSource);
    if (binding == Binding.TRANSACTION) {
      return;
    }
    throw new TransactionRequiredException(
        "save runs only on the connection bound to the active transaction of localmessage's"
            + " DataSource "
            + dataSource
            + ", and the current transaction "
            + (binding == Binding.NONE
                ? "has none (it belongs to a transaction manager of another DataSource)"
                : "has only a connection fetched on demand that no transaction manager commits")
            + ", so "
            + describe(messages)
            + " would be written outside it and could be lost after the commit. Run the save"
            + " inside @Transactional (or a TransactionTemplate) of a transaction manager on "
            + dataSource
            + ", or point localmessage at the transaction manager's DataSource (a LocalMessages"
            + " and TransactionalMessages bean of your own on it). Nothing was written.");
  }

  private static String describe(List<NewMessage> messages) {
    if (messages.isEmpty()) {
      return "the tickets";
    }
    NewMessage first = messages.get(0);
    String one = "ticket '" + first.bizType() + "' / '" + first.idemKey() + "'";
    return messages.size() == 1 ? one : one + " and " + (messages.size() - 1) + " more";
  }
}
