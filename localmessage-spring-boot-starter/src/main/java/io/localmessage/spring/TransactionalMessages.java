package io.localmessage.spring;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.StoreException;
import io.localmessage.TransactionRequiredException;
import io.localmessage.spring.internal.AfterCommitDispatch;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Saves tickets in the current Spring transaction: {@code save(message)} inside a
 * {@code @Transactional} method (or a {@code TransactionTemplate}) writes through the transaction's
 * own connection, so the ticket commits or rolls back with the business change. Works with {@code
 * DataSourceTransactionManager}, {@code JpaTransactionManager} and anything else that binds a JDBC
 * connection of the engine's {@link DataSource} to the transaction.
 *
 * <p>Outside such a transaction it throws {@link TransactionRequiredException} and writes nothing:
 * a ticket written in a second transaction could survive a rolled-back business change or be lost
 * after a committed one.
 *
 * <p>After the commit, the tickets saved in the transaction are handed to this replica's workers at
 * once (when slots are free); nothing happens on rollback. The poller remains the safety net: a
 * ticket not dispatched right after the commit is claimed at its next poll, here or elsewhere.
 */
public final class TransactionalMessages {
  private final LocalMessages localMessages;
  private final DataSource dataSource;

  public TransactionalMessages(LocalMessages localMessages, DataSource dataSource) {
    this.localMessages = Objects.requireNonNull(localMessages, "localMessages");
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
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

  /** {@link #save} for several tickets, in order, in the current transaction. */
  public List<SaveResult> saveAll(List<NewMessage> messages) {
    Objects.requireNonNull(messages, "messages");
    requireWritableTransaction(messages);
    // a transaction manager of this DataSource has bound its connection; otherwise
    // DataSourceUtils hands out a fresh pooled connection that is not in the transaction
    boolean bound = TransactionSynchronizationManager.getResource(dataSource) != null;
    Connection connection = DataSourceUtils.getConnection(dataSource);
    try {
      if (!bound && autoCommit(connection)) {
        throw new TransactionRequiredException(
            "a Spring transaction is active but not on the DataSource of localmessage: the"
                + " ticket would be written outside it. Use a transaction manager of that"
                + " DataSource (DataSourceTransactionManager or JpaTransactionManager)."
                + " Nothing was written.");
      }
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

  private static boolean autoCommit(Connection connection) {
    try {
      return connection.getAutoCommit();
    } catch (SQLException e) {
      throw new StoreException("cannot read the connection's autocommit mode", e);
    }
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

  private static String describe(List<NewMessage> messages) {
    if (messages.isEmpty()) {
      return "the tickets";
    }
    NewMessage first = messages.get(0);
    String one = "ticket '" + first.bizType() + "' / '" + first.idemKey() + "'";
    return messages.size() == 1 ? one : one + " and " + (messages.size() - 1) + " more";
  }
}
