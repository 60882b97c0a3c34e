package io.localmessage.spring.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Tells whether the current Spring transaction has a connection of a DataSource that a transaction
 * manager will commit. Not API.
 *
 * <p>Three kinds of {@link ConnectionHolder} can be bound to a DataSource while a transaction is
 * active:
 *
 * <ul>
 *   <li>{@code DataSourceTransactionManager} binds one at begin and marks it synchronized and
 *       transaction-active: its connection is committed with the transaction;
 *   <li>{@code JpaTransactionManager} binds the EntityManager's connection at begin without marking
 *       it synchronized: committed with the JPA transaction;
 *   <li>{@code DataSourceUtils} binds one on demand (a JdbcTemplate call on this DataSource inside
 *       another DataSource's transaction) and marks it synchronized but not transaction-active: it
 *       is only released when the other transaction ends, never committed. On a pool whose
 *       connections have autocommit off, what was written there is rolled back on release.
 * </ul>
 *
 * Only the first two take a message. The transaction-active flag is protected in Spring, so it is
 * read reflectively; if that ever fails, the third kind cannot be told apart and is accepted, as
 * before this check existed (logged once).
 */
public final class TransactionBoundConnection {
  private static final Logger log = LoggerFactory.getLogger(TransactionBoundConnection.class);
  private static final MethodHandle TRANSACTION_ACTIVE = transactionActiveHandle();

  private TransactionBoundConnection() {}

  /**
   * The key transaction managers bind {@code dataSource}'s connection under: they unwrap a {@link
   * TransactionAwareDataSourceProxy} to its target.
   */
  public static DataSource resourceKey(DataSource dataSource) {
    DataSource ds = dataSource;
    while (ds instanceof TransactionAwareDataSourceProxy proxy
        && proxy.getTargetDataSource() != null) {
      ds = proxy.getTargetDataSource();
    }
    return ds;
  }

  /** What is bound to {@code key} in the current transaction, for the refusal message. */
  public enum Binding {
    /** A transaction manager of this DataSource bound it: it commits with the transaction. */
    TRANSACTION,
    /** Nothing is bound: the transaction belongs to another DataSource's manager. */
    NONE,
    /** Bound on demand inside another DataSource's transaction: nothing will commit it. */
    ON_DEMAND
  }

  /** How {@code key} (see {@link #resourceKey}) is bound to the current transaction. */
  public static Binding current(DataSource key) {
    Object resource = TransactionSynchronizationManager.getResource(key);
    if (!(resource instanceof ConnectionHolder holder)) {
      return Binding.NONE;
    }
    if (!holder.isSynchronizedWithTransaction()) {
      return Binding.TRANSACTION; // a JPA (or Hibernate) transaction manager's connection
    }
    return transactionActive(holder) ? Binding.TRANSACTION : Binding.ON_DEMAND;
  }

  private static boolean transactionActive(ConnectionHolder holder) {
    if (TRANSACTION_ACTIVE == null) {
      return true;
    }
    try {
      return (boolean) TRANSACTION_ACTIVE.invoke(holder);
    } catch (Throwable e) {
      throw new IllegalStateException("reading ConnectionHolder.isTransactionActive() failed", e);
    }
  }

  private static MethodHandle transactionActiveHandle() {
    try {
      Method m = ConnectionHolder.class.getDeclaredMethod("isTransactionActive");
      m.setAccessible(true);
      return MethodHandles.lookup().unreflect(m);
    } catch (ReflectiveOperationException | RuntimeException e) {
      log.warn(
          "event=transaction_check_degraded reason=cannot_read_connection_holder error={}",
          e.toString());
      return null;
    }
  }
}
