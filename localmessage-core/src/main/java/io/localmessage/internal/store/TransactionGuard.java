package io.localmessage.internal.store;

import io.localmessage.spi.Dialect;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Watches one transaction the library opened while caller code works on its connection, so that a
 * transaction the database will not commit is never reported as committed. The caller gets a view
 * of the connection that
 *
 * <ul>
 *   <li>remembers an error of a statement that left the transaction unable to commit ({@link
 *       Dialect#errorAbortsTransaction}: any error on PostgreSQL, a deadlock everywhere), forgotten
 *       again when the caller rolls back to a savepoint set before that error;
 *   <li>refuses {@code commit()}, {@code rollback()}, {@code setAutoCommit(true)}, {@code abort}
 *       and {@code close()}: the library ends its transaction, and a caller that did it itself
 *       would leave what runs after it outside any transaction.
 * </ul>
 *
 * At the end, {@link #abortReason()} combines what it saw with what the dialect can read from the
 * connection itself ({@link Dialect#transactionFailed}). A caller that unwraps the connection works
 * on the raw one, unwatched; the dialect's check still applies. Not thread-safe: one transaction,
 * one thread at a time. Internal: not API.
 */
public final class TransactionGuard {
  private final Connection target;
  private final Dialect dialect;
  private final Connection view;
  private final Map<Savepoint, Long> savepoints = new IdentityHashMap<>();
  private long events;
  private long abortedAt = -1;
  private SQLException abortCause;
  private String endedBy;
  private boolean finished;

  public TransactionGuard(Connection target, Dialect dialect) {
    this.target = target;
    this.dialect = dialect;
    this.view =
        (Connection)
            Proxy.newProxyInstance(
                TransactionGuard.class.getClassLoader(),
                new Class<?>[] {Connection.class},
                new ConnectionView());
  }

  /** The connection to hand to the caller's work. */
  public Connection connection() {
    return view;
  }

  /** The work is over: the view refuses any further use. */
  public void finish() {
    finished = true;
  }

  /**
   * Why the transaction cannot be committed as the work left it, or null when it can: an error that
   * aborted it, or the work ending it itself.
   */
  public String abortReason() {
    if (endedBy != null) {
      return "the work called " + endedBy + " on the library's transaction";
    }
    if (abortCause != null) {
      return "a statement of the work failed and the error was caught ("
          + abortCause.getMessage()
          + "); the database rolled the transaction back or marked it failed at that error";
    }
    try {
      if (dialect.transactionFailed(target)) {
        return "the database marked the transaction failed after an error inside the work";
      }
    } catch (SQLException e) {
      abortCause = e;
      return "the transaction's state could not be read (" + e.getMessage() + ")";
    }
    return null;
  }

  /** The error behind {@link #abortReason()}, if there was one. */
  public SQLException abortCause() {
    return abortCause;
  }

  private void saw(SQLException e) {
    events++;
    if (abortCause == null && dialect.errorAbortsTransaction(e)) {
      abortCause = e;
      abortedAt = events;
    }
  }

  private Object call(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof SQLException sql) {
        saw(sql);
      }
      throw cause;
    }
  }

  private SQLException refuse(String what) {
    if (endedBy == null) {
      endedBy = what;
    }
    return new SQLException(
        what
            + " refused: the library opened this transaction and ends it itself when the work"
            + " returns (commit) or throws (rollback); it will now roll the whole work back");
  }

  private final class ConnectionView implements InvocationHandler {
    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      switch (name) {
        case "equals":
          return proxy == args[0];
        case "hashCode":
          return System.identityHashCode(proxy);
        case "toString":
          return "transaction of the library on " + target;
        case "isClosed":
          return finished || target.isClosed();
        default:
          break;
      }
      if (finished) {
        throw new SQLException(
            "this connection belonged to a transaction of the library that has ended");
      }
      switch (name) {
        case "commit", "close", "abort":
          throw refuse(name + "()");
        case "rollback":
          if (args == null || args.length == 0) {
            throw refuse("rollback()");
          }
          Object done = call(target, method, args);
          Long setAt = savepoints.get((Savepoint) args[0]);
          if (abortCause != null && setAt != null && setAt < abortedAt) {
            // back to before the error: the database forgot it (PostgreSQL), and so do we
            abortCause = null;
            abortedAt = -1;
          }
          return done;
        case "setAutoCommit":
          if (Boolean.TRUE.equals(args[0])) {
            throw refuse("setAutoCommit(true)");
          }
          return null;
        case "setSavepoint":
          Savepoint sp = (Savepoint) call(target, method, args);
          savepoints.put(sp, ++events);
          return sp;
        case "createStatement", "prepareStatement", "prepareCall":
          return statement(method, (Statement) call(target, method, args));
        default:
          return call(target, method, args);
      }
    }
  }

  private Object statement(Method created, Statement s) {
    Class<?> type =
        created.getName().equals("prepareCall")
            ? CallableStatement.class
            : created.getName().equals("prepareStatement")
                ? PreparedStatement.class
                : Statement.class;
    return Proxy.newProxyInstance(
        TransactionGuard.class.getClassLoader(),
        new Class<?>[] {type},
        (proxy, method, args) ->
            switch (method.getName()) {
              case "getConnection" -> view;
              case "equals" -> proxy == args[0];
              case "hashCode" -> System.identityHashCode(proxy);
              case "toString" -> s.toString();
              default -> call(s, method, args);
            });
  }
}
