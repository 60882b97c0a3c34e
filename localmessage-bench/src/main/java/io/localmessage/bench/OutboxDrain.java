package io.localmessage.bench;

import com.gruelbox.transactionoutbox.Dialect;
import com.gruelbox.transactionoutbox.Instantiator;
import com.gruelbox.transactionoutbox.Persistor;
import com.gruelbox.transactionoutbox.Submitter;
import com.gruelbox.transactionoutbox.TransactionManager;
import com.gruelbox.transactionoutbox.TransactionOutbox;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * transaction-outbox 4.2.268 draining a backlog of no-op invocations with a flush loop. Fairness: a
 * new entry is due only after {@code attemptFrequency} (2 min by default) and the default submitter
 * runs on the common pool (one thread on 2 cores), so the backlog is made due before the run and
 * the submitter gets a real pool of {@code threads}. Each invocation runs in its own transaction
 * (lock, invoke, delete, commit): one commit per job, plus the flush's push-back update per entry.
 */
final class OutboxDrain {
  static final String TABLE = "TXNO_OUTBOX";

  private OutboxDrain() {}

  /**
   * What the outbox invokes: a no-op, or an action (the io workload's HTTP call); public and
   * proxyable, as the outbox requires.
   */
  public static class NoopTarget {
    private final LongAdder handled;
    private final Runnable action;

    public NoopTarget() {
      this(new LongAdder());
    }

    NoopTarget(LongAdder handled) {
      this(handled, () -> {});
    }

    NoopTarget(LongAdder handled, Runnable action) {
      this.handled = handled;
      this.action = action;
    }

    public void run() {
      action.run();
      handled.increment();
    }
  }

  static String describe(int threads) {
    return "transaction-outbox 4.2.268: Submitter.withExecutor(pool of "
        + threads
        + "), flushBatchSize default (4096), flush() in a loop, backlog already due";
  }

  static Dialect dialect(Scope scope) {
    return scope.isPostgres() ? Dialect.POSTGRESQL_9 : Dialect.MY_SQL_8;
  }

  /**
   * Creates the outbox's tables (its own migrations), schedules one entry through its API with a
   * submitter that runs nothing, copies it {@code n - 1} times and makes every entry due now.
   */
  static void seed(Scope scope, int n) throws SQLException {
    DataSource ds = scope.setupDataSource();
    TransactionManager tm = TransactionManager.fromDataSource(ds);
    TransactionOutbox seeder =
        TransactionOutbox.builder()
            .transactionManager(tm)
            .persistor(Persistor.forDialect(dialect(scope)))
            .instantiator(Instantiator.using(c -> new NoopTarget()))
            .submitter((entry, work) -> {})
            .build();
    tm.inTransaction(() -> seeder.schedule(NoopTarget.class).run());
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      String table = tableName(c);
      List<String> columns = columns(c, table);
      if (n > 1) {
        st.executeUpdate(copySql(scope, table, columns, n));
      }
      String past =
          scope.isPostgres() ? "now() - interval '1 minute'" : "NOW(6) - INTERVAL 1 MINUTE";
      st.executeUpdate(
          "UPDATE " + table + " SET " + column(columns, "nextattempttime") + " = " + past);
    }
    scope.analyze(scope.isPostgres() ? "txno_outbox" : TABLE);
  }

  private static String tableName(Connection c) throws SQLException {
    return c.getMetaData().storesLowerCaseIdentifiers() ? "txno_outbox" : TABLE;
  }

  private static List<String> columns(Connection c, String table) throws SQLException {
    DatabaseMetaData md = c.getMetaData();
    List<String> out = new ArrayList<>();
    try (ResultSet rs = md.getColumns(c.getCatalog(), c.getSchema(), table, null)) {
      while (rs.next()) {
        out.add(rs.getString("COLUMN_NAME"));
      }
    }
    if (out.isEmpty()) {
      throw new IllegalStateException("no columns found for " + table);
    }
    return out;
  }

  private static String column(List<String> columns, String lower) {
    return columns.stream()
        .filter(c -> c.toLowerCase(Locale.ROOT).equals(lower))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("outbox table has no column " + lower));
  }

  private static String copySql(Scope scope, String table, List<String> columns, int n) {
    List<String> select = new ArrayList<>();
    for (String col : columns) {
      String lower = col.toLowerCase(Locale.ROOT);
      select.add(
          switch (lower) {
            case "id" -> scope.isPostgres() ? "gen_random_uuid()::text" : "UUID()";
            case "uniquerequestid" -> "NULL";
            default -> "t." + col;
          });
    }
    String source = scope.isPostgres() ? "generate_series(2, " + n + ") g" : "seq_2_to_" + n + " g";
    return "INSERT INTO "
        + table
        + " ("
        + String.join(", ", columns)
        + ") SELECT "
        + String.join(", ", select)
        + " FROM "
        + table
        + " t CROSS JOIN "
        + source;
  }

  static Drain.Result run(Scope scope, int n, int threads) throws Exception {
    return run(scope, n, threads, () -> {}, Drain.timeoutFor(n).multipliedBy(2), Drain.Meter.NONE);
  }

  /**
   * Drains {@code n} invocations that each run {@code action}; {@code meter} is reset before the
   * pool and the workers are created and ticked while the drain is awaited.
   */
  static Drain.Result run(
      Scope scope, int n, int threads, Runnable action, Duration timeout, Drain.Meter meter)
      throws Exception {
    seed(scope, n);
    scope.closePools(); // the setup pool's thread is not the outbox's
    long before = Drain.settledCommits(scope);
    LongAdder handled = new LongAdder();
    NoopTarget target = new NoopTarget(handled, action);
    meter.reset();
    // the workers each hold a connection while they run an entry, plus the flush loop's
    DataSource pool = scope.pool("outbox", threads + 2);
    AtomicInteger names = new AtomicInteger();
    ThreadPoolExecutor workers =
        new ThreadPoolExecutor(
            threads,
            threads,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> new Thread(r, "bench-outbox-" + names.incrementAndGet()));
    TransactionManager tm = TransactionManager.fromDataSource(pool);
    TransactionOutbox outbox =
        TransactionOutbox.builder()
            .transactionManager(tm)
            .persistor(Persistor.forDialect(dialect(scope)))
            .instantiator(Instantiator.using(c -> target))
            .submitter(Submitter.withExecutor(workers))
            .build();
    AtomicBoolean done = new AtomicBoolean();
    Thread flusher =
        new Thread(
            () -> {
              while (!done.get()) {
                if (!outbox.flush()) {
                  LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
              }
            },
            "bench-outbox-flush");
    long monitorQueries;
    double seconds;
    try {
      long t0 = System.nanoTime();
      meter.started();
      flusher.start();
      monitorQueries =
          Drain.awaitEmpty(
              handled, n, scope, scope.isPostgres() ? "txno_outbox" : TABLE, timeout, meter);
      seconds = (System.nanoTime() - t0) / 1e9;
      meter.drained();
    } finally {
      done.set(true);
      flusher.join(30_000);
      workers.shutdown();
      workers.awaitTermination(30, TimeUnit.SECONDS);
      scope.closePools();
    }
    long after = Drain.settledCommits(scope);
    return new Drain.Result(
        n, handled.sum(), seconds, Drain.commitsPer1k(before, after, monitorQueries, n));
  }
}
