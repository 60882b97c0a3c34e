package io.localmessage.internal.store;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;

/**
 * The library's one classification of SQL errors: a database that is briefly unavailable versus a
 * statement it refuses, and an error that rolled the whole transaction back. Internal: not API.
 */
public final class SqlErrors {
  private SqlErrors() {}

  /**
   * True when trying the same statement again later may succeed: lost or refused connections, pool
   * timeouts, deadlocks and serialization failures, lock wait timeouts, a server shutting down or
   * starting. False for what the database refuses in the statement itself (bad data, constraint
   * violations) and for failures that are not SQL errors.
   */
  public static boolean isTransient(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof SQLTransientException
          || t instanceof SQLRecoverableException
          || t instanceof SQLNonTransientConnectionException) {
        return true;
      }
      if (t instanceof SQLException e) {
        String state = e.getSQLState();
        if (state != null
            && (state.startsWith("08")
                || state.startsWith("40")
                || state.startsWith("53")
                || state.startsWith("57")
                || state.startsWith("HYT"))) {
          return true;
        }
        int code = e.getErrorCode();
        if (code == 1205 || code == 1213 || code == 2006 || code == 2013) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * True for an integrity constraint violation (SQLSTATE class 23: a duplicate key, a foreign key,
   * a NOT NULL): what the statement did was refused, not the connection.
   */
  public static boolean integrityViolation(SQLException e) {
    String state = e.getSQLState();
    return (state != null && state.startsWith("23")) || e.getErrorCode() == 1062;
  }

  /**
   * True when the database rolled the whole transaction back at this error, whatever the caller
   * does next: a deadlock or serialization failure (SQLSTATE class 40, MySQL/MariaDB code 1213).
   * Other errors undo at most their own statement on MySQL/MariaDB and H2; PostgreSQL aborts the
   * transaction at any error (see {@code Dialect.errorAbortsTransaction}).
   */
  public static boolean rolledBack(SQLException e) {
    String state = e.getSQLState();
    return (state != null && state.startsWith("40")) || e.getErrorCode() == 1213;
  }
}
