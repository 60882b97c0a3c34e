package io.localmessage.internal.store;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * One connection of the pool that a loop of the engine keeps for itself while it matters, so that
 * it never waits behind other borrowers of the same pool: the handlers' own database work can take
 * every other connection. Borrowed by {@link #reserve()} (or at a use) and kept until {@link
 * #release()}; a connection that failed is given back to the pool (which discards a broken one) and
 * another is borrowed at the next use. {@link #close()} gives it back for good.
 */
public final class ReservedConnection {
  private final DataSource pool;
  private Connection connection; // guarded by this
  private volatile boolean held; // connection != null, readable without the lock
  private boolean closed; // guarded by this

  public ReservedConnection(DataSource pool) {
    this.pool = pool;
  }

  /** Borrows the connection now if it is not held; a failure is left to the next use. */
  public synchronized void reserve() {
    if (closed || connection != null) {
      return;
    }
    try {
      connection = Transactions.autocommit(pool);
      held = true;
    } catch (SQLException | RuntimeException e) {
      // the database is away: the next use tries again
    }
  }

  /** Whether the connection is held now (without waiting for a use under way). */
  public boolean held() {
    return held;
  }

  /** Gives the connection back to the pool until the next {@link #reserve()} or use. */
  public synchronized void release() {
    giveBack();
  }

  /** Runs {@code work} on the kept connection (in autocommit mode), borrowing it if needed. */
  public synchronized <T> T use(Transactions.SqlWork<T> work) throws SQLException {
    if (closed) {
      throw new SQLException("the reserved connection was given back (the engine is stopping)");
    }
    if (connection == null) {
      connection = Transactions.autocommit(pool);
      held = true;
    }
    try {
      return work.run(connection);
    } catch (SQLException | RuntimeException | Error e) {
      giveBack();
      throw e;
    }
  }

  /** Gives the connection back to the pool for good; waits for a use in progress to end. */
  public synchronized void close() {
    closed = true;
    giveBack();
  }

  private void giveBack() {
    Connection c = connection;
    connection = null;
    held = false;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException | RuntimeException ignored) {
        // broken: the pool discards it
      }
    }
  }
}
