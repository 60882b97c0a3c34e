package io.localmessage.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLDataException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * A data source in front of a real one whose prepared statements refuse, as a data error (SQLSTATE
 * 22001, not an outage), to run with a parameter the predicate picks (the elements of an array
 * parameter each): one row the database will not store, on any database, while every other
 * statement runs as usual.
 */
public final class Refusing {
  private Refusing() {}

  /** Refuses statements with a parameter for which {@code poison} holds. */
  public static DataSource dataSource(
      DataSource target, java.util.function.Predicate<Object> poison) {
    return proxy(
        DataSource.class,
        target,
        (m, result) ->
            m.getName().equals("getConnection") ? connection((Connection) result, poison) : result);
  }

  private static Connection connection(Connection c, java.util.function.Predicate<Object> poison) {
    return proxy(
        Connection.class,
        c,
        (m, result) ->
            m.getName().equals("prepareStatement")
                ? statement((PreparedStatement) result, poison)
                : result);
  }

  private static PreparedStatement statement(
      PreparedStatement s, java.util.function.Predicate<Object> poison) {
    List<Object> args = new ArrayList<>();
    InvocationHandler h =
        (proxy, m, a) -> {
          String name = m.getName();
          if (name.startsWith("set") && a != null && a.length == 2) {
            Object v = a[1] instanceof Array array ? array.getArray() : a[1];
            if (v instanceof Object[] values) {
              args.addAll(java.util.Arrays.asList(values));
            } else {
              args.add(v);
            }
          }
          if (name.startsWith("execute") && args.stream().anyMatch(poison)) {
            args.clear();
            throw new SQLDataException("value too long for its column (test refusal)", "22001");
          }
          if (name.startsWith("execute") || name.equals("clearBatch")) {
            args.clear();
          }
          return invoke(m, s, a);
        };
    return (PreparedStatement)
        Proxy.newProxyInstance(
            Refusing.class.getClassLoader(), new Class<?>[] {PreparedStatement.class}, h);
  }

  private interface After {
    Object apply(Method m, Object result) throws Exception;
  }

  @SuppressWarnings("unchecked")
  private static <T> T proxy(Class<T> type, T target, After after) {
    return (T)
        Proxy.newProxyInstance(
            Refusing.class.getClassLoader(),
            new Class<?>[] {type},
            (p, m, a) -> after.apply(m, invoke(m, target, a)));
  }

  private static Object invoke(Method m, Object target, Object[] a) throws Throwable {
    try {
      return m.invoke(target, a);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
