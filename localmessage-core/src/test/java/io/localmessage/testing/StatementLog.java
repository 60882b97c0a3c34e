package io.localmessage.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * A data source in front of a real one that records which thread prepared which statement: how many
 * round trips a loop makes is behaviour (an idle engine must not poll in a busy loop), and this
 * sees it on every database without reading server statistics.
 */
public final class StatementLog {
  /** One prepared statement: the preparing thread's name and the SQL text. */
  public record Entry(String thread, String sql) {}

  private final List<Entry> entries = new CopyOnWriteArrayList<>();
  private final DataSource dataSource;

  /** Records the statements prepared through the returned {@link #dataSource()}. */
  public StatementLog(DataSource target) {
    this.dataSource =
        proxy(
            DataSource.class,
            (p, m, a) -> {
              Object result = invoke(m, target, a);
              return m.getName().equals("getConnection") ? connection((Connection) result) : result;
            });
  }

  public DataSource dataSource() {
    return dataSource;
  }

  /**
   * How many statements matching {@code sql} were prepared on a thread whose name starts with
   * {@code threadPrefix}.
   */
  public long count(String threadPrefix, Predicate<String> sql) {
    return entries.stream()
        .filter(e -> e.thread().startsWith(threadPrefix) && sql.test(e.sql()))
        .count();
  }

  private Connection connection(Connection c) {
    return proxy(
        Connection.class,
        (p, m, a) -> {
          if (m.getName().equals("prepareStatement") && a != null && a[0] instanceof String sql) {
            entries.add(new Entry(Thread.currentThread().getName(), sql));
          }
          return invoke(m, c, a);
        });
  }

  @SuppressWarnings("unchecked")
  private static <T> T proxy(Class<T> type, InvocationHandler h) {
    return (T)
        Proxy.newProxyInstance(StatementLog.class.getClassLoader(), new Class<?>[] {type}, h);
  }

  private static Object invoke(Method m, Object target, Object[] a) throws Throwable {
    try {
      return m.invoke(target, a);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
