package io.localmessage.internal.store;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** The one kind of transaction operator actions run: short, retried on a deadlock. */
final class OperatorTransactions {

  /** Work in one transaction. */
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  private final DataSource pool;

  OperatorTransactions(DataSource pool) {
    this.pool = pool;
  }

  Connection autocommit() throws SQLException {
    return Transactions.autocommit(pool);
  }

  /**
   * Runs {@code work} in one short transaction, retried up to twice on a deadlock or serialization
   * failure ({@link Transactions#retrying}).
   */
  <T> T inTransaction(Work<T> work, String what) {
    return Transactions.retrying(pool, what, work::run);
  }
}
