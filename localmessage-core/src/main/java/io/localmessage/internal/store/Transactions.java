package io.localmessage.internal.store;

import io.localmessage.LocalMessageException;
import io.localmessage.StoreException;
import io.localmessage.TransactionAbortedException;
import io.localmessage.spi.Dialect;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The one door through which the library opens a transaction, around the caller's work or its own
 * statements, and the one place that switches a pooled connection to autocommit (design 8.18 lists
 * the paths it serves). A transaction opened here ends in exactly one way:
 *
 * <ul>
 *   <li>committed, only after the work returned normally, no statement of the work left the
 *       transaction unable to commit (see {@link TransactionGuard}) and the work did not end the
 *       transaction itself;
 *   <li>rolled back on anything else, every {@link Throwable} included; autocommit is restored only
 *       after the rollback succeeded, because restoring it on an open transaction commits it.
 * </ul>
 *
 * A commit that the database will not make is reported as {@link TransactionAbortedException},
 * never as done; a commit whose outcome is unknown (the connection broke during it) as {@link
 * StoreException}. Internal: not API, shared with the library's other modules.
 */
public final class Transactions {
  private Transactions() {}

  /** Work run inside a transaction. */
  @FunctionalInterface
  public interface Work<T> {
    T run(Connection c) throws Exception;
  }

  /** The library's own statements: no caller code runs inside. */
  @FunctionalInterface
  public interface SqlWork<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs caller {@code work} in one transaction on a connection of {@code pool}. Unchecked
   * exceptions and errors of the work pass through unchanged, checked ones are wrapped in {@link
   * LocalMessageException}; {@code what} names the work in messages ("inbox work").
   */
  public static <T> T run(DataSource pool, Dialect dialect, String what, Work<T> work) {
    Connection connection;
    try {
      connection = pool.getConnection();
    } catch (SQLException e) {
      throw new StoreException(what + ": no connection: " + e.getMessage(), e);
    }
    try (Connection c = connection) {
      return run(c, dialect, what, work);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Exception e) {
      throw new LocalMessageException(what + " failed: " + e.getMessage(), e);
    }
  }

  /**
   * Runs caller {@code work} in one transaction on {@code c}, which is in autocommit mode or has no
   * transaction open, and leaves it as it found it after a clean end. Whatever the work throws
   * passes through unchanged, after the rollback.
   *
   * @throws TransactionAbortedException the work returned, but the database cannot commit it
   * @throws StoreException the commit failed: whether it took effect is unknown
   */
  public static <T> T run(Connection c, Dialect dialect, String what, Work<T> work)
      throws Exception {
    boolean auto;
    try {
      auto = c.getAutoCommit();
      if (auto) {
        c.setAutoCommit(false);
      }
    } catch (SQLException e) {
      throw new StoreException(what + ": the transaction could not begin: " + e.getMessage(), e);
    }
    TransactionGuard guard = new TransactionGuard(c, dialect);
    T result;
    try {
      result = work.run(guard.connection());
    } catch (Throwable t) {
      guard.finish();
      if (rollback(c, t)) {
        restoreAutoCommit(c, auto);
      }
      throw t;
    }
    guard.finish();
    commit(c, guard, what);
    restoreAutoCommit(c, auto);
    return result;
  }

  /**
   * Commits the transaction {@code guard} watched on {@code c}, unless its work left it unable to
   * commit: then rolls back and throws {@link TransactionAbortedException}. A failed commit becomes
   * a {@link StoreException} saying the outcome is unknown. For callers that keep one connection
   * across transactions (the Kafka inbox consumer); {@link #run} does this itself.
   */
  public static void commit(Connection c, TransactionGuard guard, String what) {
    String aborted = guard.abortReason();
    if (aborted != null) {
      TransactionAbortedException e =
          new TransactionAbortedException(
              what
                  + ": nothing was committed, the transaction was rolled back: "
                  + aborted
                  + ". To go on after an expected error inside the work, run that statement under"
                  + " a savepoint (Connection.setSavepoint / rollback(savepoint)) or avoid the error"
                  + " (INSERT ... ON CONFLICT DO NOTHING, ... ON DUPLICATE KEY UPDATE).",
              guard.abortCause());
      rollback(c, e);
      throw e;
    }
    try {
      c.commit();
    } catch (SQLException e) {
      StoreException unknown =
          new StoreException(
              what + ": the commit failed, whether it took effect is unknown: " + e.getMessage(),
              e);
      rollback(c, unknown);
      throw unknown;
    }
  }

  /**
   * Runs the library's own statements in one short transaction on {@code c} (autocommit mode),
   * committing after they succeeded and rolling back on anything else.
   */
  public static <T> T shortTransaction(Connection c, SqlWork<T> work) throws SQLException {
    boolean auto = c.getAutoCommit();
    c.setAutoCommit(false);
    T result;
    try {
      result = work.run(c);
      c.commit();
    } catch (Throwable t) {
      if (rollback(c, t)) {
        restoreAutoCommit(c, auto);
      }
      throw t;
    }
    restoreAutoCommit(c, auto);
    return result;
  }

  /** Tries of an operator action whose transaction a deadlock or serialization failure ended. */
  static final int RETRYING_TRIES = 5;

  /**
   * Runs the library's own statements in one transaction on a connection of {@code pool}, tried up
   * to {@value #RETRYING_TRIES} times on a transient failure that rolled the transaction back (a
   * deadlock or serialization failure), after a short random pause that grows with each try (up to
   * 20 ms times the try): operator actions lock message rows while workers claim, write back and
   * sweep around them, and other operators act at once; the database may pick the operator as the
   * victim, and trying again at once met the same deadlock (seen three times in a row on H2 with
   * three operators and two replicas).
   */
  public static <T> T retrying(DataSource pool, String what, SqlWork<T> work) {
    for (int attempt = 1; ; attempt++) {
      try (Connection c = pool.getConnection()) {
        return shortTransaction(c, work);
      } catch (SQLException e) {
        if (!SqlErrors.rolledBack(e) || attempt >= RETRYING_TRIES) {
          throw new StoreException(what + " failed: " + e.getMessage(), e);
        }
      }
      try {
        Thread.sleep(
            java.util.concurrent.ThreadLocalRandom.current().nextLong(1, 20L * attempt + 1));
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        throw new StoreException(what + " interrupted while waiting to try again", interrupted);
      }
    }
  }

  /**
   * A connection of {@code pool} in autocommit mode, for the library's single statements outside
   * any transaction (queries, listener and wake-up connections, the console's revocations). Pools
   * hand connections out so; one configured with {@code autoCommit=false} hands out a connection
   * with no transaction open (the pool ends it when the connection returns), so switching
   * autocommit on here commits nothing. The engine's data source is a plain pool, never one that
   * joins a caller's transaction. Closes the connection when switching fails.
   */
  public static Connection autocommit(DataSource pool) throws SQLException {
    Connection c = pool.getConnection();
    try {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true);
      }
      return c;
    } catch (SQLException | RuntimeException e) {
      try {
        c.close();
      } catch (SQLException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  /** Rolls back after {@code cause}; false (the failure added to it) when that failed too. */
  public static boolean rollback(Connection c, Throwable cause) {
    try {
      c.rollback();
      return true;
    } catch (SQLException | RuntimeException e) {
      // a broken connection: report what broke it; the pool discards the connection
      cause.addSuppressed(e);
      return false;
    }
  }

  /**
   * Sets autocommit back to {@code auto} once no transaction is open any more (after a commit or a
   * rollback that succeeded, never instead of one); a failure is left to the pool, which discards a
   * broken connection.
   */
  public static void restoreAutoCommit(Connection c, boolean auto) {
    if (!auto) {
      return;
    }
    try {
      c.setAutoCommit(true);
    } catch (SQLException e) {
      // no transaction is open any more; the pool discards a broken connection on close
    }
  }
}
