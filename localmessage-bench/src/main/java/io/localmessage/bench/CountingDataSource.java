package io.localmessage.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * Wraps a data source and counts the statements executed through it (every {@code execute*} call is
 * one round trip) and the explicit commits. Used for the idle cost, where every statement is
 * overhead.
 */
final class CountingDataSource {
  private static final Set<String> EXECUTES =
      Set.of(
          "execute",
          "executeQuery",
          "executeUpdate",
          "executeLargeUpdate",
          "executeBatch",
          "executeLargeBatch");

  final LongAdder statements = new LongAdder();
  final LongAdder commits = new LongAdder();
  private final Map<String, LongAdder> byKind = new ConcurrentHashMap<>();
  private final Map<String, String> sqlByKind = new ConcurrentHashMap<>();
  private final DataSource delegate;

  CountingDataSource(DataSource delegate) {
    this.delegate = delegate;
  }

  DataSource dataSource() {
    return proxy(DataSource.class, delegate);
  }

  void reset() {
    statements.reset();
    commits.reset();
    byKind.clear();
  }

  /**
   * Executions per statement kind: the first two words of the SQL, e.g. "WITH req", "DELETE FROM".
   */
  Map<String, Long> byKind() {
    Map<String, Long> out = new TreeMap<>();
    byKind.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  /** One SQL text seen for each kind. */
  Map<String, String> sqlByKind() {
    return new TreeMap<>(sqlByKind);
  }

  static String kind(String sql) {
    String[] words = sql.strip().split("\\s+", 3);
    return (words.length > 1 ? words[0] + " " + words[1] : words[0]).toUpperCase(Locale.ROOT);
  }

  private <T> T proxy(Class<T> type, Object target) {
    return proxy(type, target, null);
  }

  private <T> T proxy(Class<T> type, Object target, String sql) {
    InvocationHandler h =
        (p, method, args) -> {
          Object result;
          try {
            result = method.invoke(target, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          String text = sql;
          if (text == null && args != null && args.length > 0 && args[0] instanceof String s) {
            text = s;
          }
          return wrap(method, result, text);
        };
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h));
  }

  private Object wrap(Method method, Object result, String sql) {
    String name = method.getName();
    if (EXECUTES.contains(name)) {
      statements.increment();
      if (sql != null) {
        String kind = kind(sql);
        byKind.computeIfAbsent(kind, k -> new LongAdder()).increment();
        sqlByKind.putIfAbsent(kind, sql);
      }
    } else if (name.equals("commit")) {
      commits.increment();
    }
    if (name.equals("unwrap")) {
      return result; // the caller asked for the driver's own object, not a counting proxy
    }
    boolean prepares = name.startsWith("prepare");
    if (result instanceof CallableStatement cs) {
      return proxy(CallableStatement.class, cs, prepares ? sql : null);
    }
    if (result instanceof PreparedStatement ps) {
      return proxy(PreparedStatement.class, ps, prepares ? sql : null);
    }
    if (result instanceof Statement st) {
      return proxy(Statement.class, st);
    }
    if (result instanceof Connection c) {
      return proxy(Connection.class, c);
    }
    return result;
  }
}
