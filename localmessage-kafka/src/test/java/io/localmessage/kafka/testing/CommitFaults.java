package io.localmessage.kafka.testing;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A real data source whose connections' {@code commit()} can be made to fail on chosen commits, the
 * way a connection that breaks during the commit looks to the application: either after the
 * database committed (the answer was lost) or before (nothing committed). Everything else goes to
 * the real database untouched.
 */
public final class CommitFaults {
  /** What a chosen commit does. */
  public enum Fault {
    /** The database commits, then the call throws: the application cannot know it committed. */
    COMMIT_THEN_THROW,
    /** The transaction is rolled back, then the call throws. */
    ROLLBACK_THEN_THROW,
    /** The database commits, then the JVM halts at once (kill -9 without a signal). */
    COMMIT_THEN_HALT
  }

  /** The exit code of a JVM halted by {@link Fault#COMMIT_THEN_HALT}. */
  public static final int HALT_EXIT_CODE = 77;

  private final DataSource target;
  private final Map<Integer, Fault> faults = new ConcurrentHashMap<>();
  private final AtomicInteger commits = new AtomicInteger();
  private final AtomicInteger fired = new AtomicInteger();

  public CommitFaults(DataSource target) {
    this.target = target;
  }

  /** Makes the {@code n}th commit (counted from 1 over all connections) do {@code fault}. */
  public CommitFaults on(int n, Fault fault) {
    faults.put(n, fault);
    return this;
  }

  /** Commits attempted so far. */
  public int commits() {
    return commits.get();
  }

  /** Faults that fired so far. */
  public int fired() {
    return fired.get();
  }

  public DataSource dataSource() {
    return (DataSource)
        Proxy.newProxyInstance(
            DataSource.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, m, args) -> {
              Object r = invoke(target, m, args);
              return r instanceof Connection c ? connection(c) : r;
            });
  }

  private Connection connection(Connection real) {
    InvocationHandler h =
        (proxy, m, args) -> {
          if (!m.getName().equals("commit") || m.getParameterCount() != 0) {
            return invoke(real, m, args);
          }
          Fault f = faults.remove(commits.incrementAndGet());
          if (f == null) {
            real.commit();
            return null;
          }
          fired.incrementAndGet();
          switch (f) {
            case COMMIT_THEN_THROW -> {
              real.commit();
              throw new SQLException("injected: connection lost after the commit", "08006");
            }
            case ROLLBACK_THEN_THROW -> {
              real.rollback();
              throw new SQLException("injected: connection lost before the commit", "08006");
            }
            case COMMIT_THEN_HALT -> {
              real.commit();
              Runtime.getRuntime().halt(HALT_EXIT_CODE);
              return null;
            }
          }
          return null;
        };
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
