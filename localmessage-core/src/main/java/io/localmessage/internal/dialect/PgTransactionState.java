package io.localmessage.internal.dialect;

import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Reads pgjdbc's own record of the server's transaction status ({@code BaseConnection
 * .getTransactionState()}, kept from the status byte of every server reply), found by reflection so
 * the core has no compile-time dependency on the driver. Asked after every handler call of the
 * Kafka inbox consumer: the driver's class and method are looked up once, not per call.
 */
final class PgTransactionState {
  private static final String BASE_CONNECTION = "org.postgresql.core.BaseConnection";

  /** The driver's {@code BaseConnection} and its getter, or null until found. */
  private record Driver(Class<?> base, Method state) {}

  private static volatile Driver driver;

  private PgTransactionState() {}

  /** True when the driver reports the open transaction FAILED; false when it cannot tell. */
  static boolean failed(Connection c) throws SQLException {
    Driver d = driver(c);
    if (d == null || !c.isWrapperFor(d.base())) {
      return false;
    }
    Object raw = c.unwrap(d.base());
    try {
      return "FAILED".equals(String.valueOf(d.state().invoke(raw)));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
  }

  private static Driver driver(Connection c) {
    Driver d = driver;
    if (d != null) {
      return d;
    }
    for (ClassLoader loader :
        new ClassLoader[] {
          PgTransactionState.class.getClassLoader(),
          Thread.currentThread().getContextClassLoader(),
          c.getClass().getClassLoader()
        }) {
      if (loader == null) {
        continue;
      }
      try {
        Class<?> base = Class.forName(BASE_CONNECTION, false, loader);
        d = new Driver(base, base.getMethod("getTransactionState"));
        driver = d;
        return d;
      } catch (ReflectiveOperationException | LinkageError e) {
        // try the next loader
      }
    }
    return null;
  }
}
