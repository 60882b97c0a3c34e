package io.localmessage.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import javax.sql.DataSource;

/**
 * Data sources in front of real connections whose calls a test may answer itself: a failure the
 * database would raise at a bad moment (a deadlock, a broken rollback), or a connection that is
 * never really closed, the way a single-connection data source or a pool that does not reset
 * connections hands it back, so the state the library leaves it in can be read.
 */
public final class Intercepting {
  /** Returned by a {@link Hook} to let the call through to the real connection. */
  public static final Object PROCEED = new Object();

  /** Answers a call on a connection, or returns {@link #PROCEED}. */
  public interface Hook {
    Object call(Connection real, Method m, Object[] args) throws Throwable;
  }

  private Intercepting() {}

  /** Connections of {@code target}, each call offered to {@code hook} first. */
  public static DataSource dataSource(DataSource target, Hook hook) {
    return (DataSource)
        Proxy.newProxyInstance(
            Intercepting.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (p, m, a) -> {
              Object result = invoke(m, target, a);
              return m.getName().equals("getConnection")
                  ? connection((Connection) result, hook)
                  : result;
            });
  }

  /**
   * A data source that hands out {@code c} every time and ignores {@code close()}: what the library
   * leaves behind on the connection is what the next borrower gets.
   */
  public static DataSource single(Connection c) {
    return (DataSource)
        Proxy.newProxyInstance(
            Intercepting.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (p, m, a) -> {
              if (m.getName().equals("getConnection")) {
                return connection(
                    c, (real, cm, ca) -> cm.getName().equals("close") ? null : PROCEED);
              }
              throw new UnsupportedOperationException(m.getName());
            });
  }

  private static Connection connection(Connection c, Hook hook) {
    return (Connection)
        Proxy.newProxyInstance(
            Intercepting.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (p, m, a) -> {
              Object answer = hook.call(c, m, a);
              return answer == PROCEED ? invoke(m, c, a) : answer;
            });
  }

  private static Object invoke(Method m, Object target, Object[] a) throws Throwable {
    try {
      return m.invoke(target, a);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
