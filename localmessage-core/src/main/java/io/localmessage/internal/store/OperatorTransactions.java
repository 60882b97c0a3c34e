package io.localmessage.internal.store;

import io.localmessage.StoreException;
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
    return Jdbc.autocommit(pool);
  }

  /**
   * Runs {@code work} in one short transaction. A deadlock or serialization failure (SQLState
   * 40001, or MySQL's 1213) is retried up to twice: operator actions lock a message row while
   * workers claim and sweep around it, and InnoDB may pick the operator as the victim.
   */
  <T> T inTransaction(Work<T> work, String what) {
    for (int attempt = 1; ; attempt++) {
      try (Connection c = pool.getConnection()) {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
          T result = work.run(c);
          c.commit();
          return result;
        } catch (SQLException | RuntimeException e) {
          try {
            c.rollback();
          } catch (SQLException rollbackFailed) {
            // a broken connection: report what broke it, not the failed rollback
            e.addSuppressed(rollbackFailed);
          }
          throw e;
        } finally {
          restoreAutoCommit(c, auto);
        }
      } catch (SQLException e) {
        boolean retryable = "40001".equals(e.getSQLState()) || e.getErrorCode() == 1213;
        if (!retryable || attempt >= 3) {
          throw new StoreException(what + " failed: " + e.getMessage(), e);
        }
      }
    }
  }

  private static void restoreAutoCommit(Connection c, boolean auto) {
    try {
      c.setAutoCommit(auto);
    } catch (SQLException e) {
      // the pool discards a broken connection on close
    }
  }
}
