package io.localmessage.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerName;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * db-scheduler 16.7.1 draining a backlog of no-op one-time tasks: lock-and-fetch polling ({@code
 * pollUsingLockAndFetch(0.5, 4.0)}, the PostgreSQL single-statement {@code SELECT ... FOR UPDATE
 * SKIP LOCKED} strategy its performance notes recommend for throughput), 100 ms polling interval,
 * {@code threads} executor threads (its published benchmark ran 20 per instance). Each completed
 * one-time task is deleted in its own transaction: one commit per job.
 */
final class DbSchedulerDrain {
  static final String TABLE = "scheduled_tasks";
  static final String TASK = "bench-noop";
  static final Duration POLLING_INTERVAL = Duration.ofMillis(100);

  // the table of db-scheduler's PostgreSQL schema (postgresql_tables.sql of the release)
  static final String[] POSTGRES_DDL = {
    "CREATE TABLE scheduled_tasks (task_name TEXT NOT NULL, task_instance TEXT NOT NULL,"
        + " task_data BYTEA, execution_time TIMESTAMP WITH TIME ZONE NOT NULL,"
        + " picked BOOLEAN NOT NULL, picked_by TEXT, last_success TIMESTAMP WITH TIME ZONE,"
        + " last_failure TIMESTAMP WITH TIME ZONE, consecutive_failures INT,"
        + " last_heartbeat TIMESTAMP WITH TIME ZONE, version BIGINT NOT NULL, priority SMALLINT,"
        + " PRIMARY KEY (task_name, task_instance))",
    "CREATE INDEX execution_time_idx ON scheduled_tasks (execution_time)",
    "CREATE INDEX last_heartbeat_idx ON scheduled_tasks (last_heartbeat)",
    "CREATE INDEX priority_execution_time_idx ON scheduled_tasks (priority DESC, execution_time)"
  };

  private DbSchedulerDrain() {}

  static String describe(int threads) {
    return "db-scheduler 16.7.1: threads="
        + threads
        + " pollUsingLockAndFetch(0.5, 4.0) pollingInterval="
        + POLLING_INTERVAL.toMillis()
        + "ms, one-time no-op tasks";
  }

  static OneTimeTask<Void> task(LongAdder handled) {
    return Tasks.oneTime(TASK).execute((instance, ctx) -> handled.increment());
  }

  /** A task that runs {@code action} with the instance id, then counts the execution. */
  static OneTimeTask<Void> task(LongAdder handled, Consumer<String> action) {
    return Tasks.oneTime(TASK)
        .execute(
            (instance, ctx) -> {
              action.accept(instance.getId());
              handled.increment();
            });
  }

  static void createSchema(Scope scope) {
    scope.exec(POSTGRES_DDL);
  }

  /** Loads {@code n} due executions, as {@code schedule(task.instance(id), past)} writes them. */
  static void seed(Scope scope, int n) throws SQLException {
    createSchema(scope);
    try (Connection c = scope.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO "
                    + TABLE
                    + " (task_name, task_instance, task_data, execution_time, picked, version)"
                    + " SELECT ?, 'i-' || g, NULL, now() - interval '1 second', false, 1"
                    + " FROM generate_series(1, ?) g")) {
      ps.setString(1, TASK);
      ps.setInt(2, n);
      ps.executeUpdate();
    }
    scope.analyze(TABLE);
  }

  static Scheduler scheduler(DataSource ds, int threads, String name, LongAdder handled) {
    return scheduler(ds, threads, name, task(handled));
  }

  static Scheduler scheduler(DataSource ds, int threads, String name, OneTimeTask<Void> task) {
    return Scheduler.create(ds, task)
        .threads(threads)
        .pollingInterval(POLLING_INTERVAL)
        .pollUsingLockAndFetch(0.5, 4.0)
        .schedulerName(new SchedulerName.Fixed(name))
        .shutdownMaxWait(Duration.ofSeconds(10))
        .build();
  }

  static Drain.Result run(Scope scope, int n, int threads) throws Exception {
    return run(scope, n, threads, id -> {}, Drain.timeoutFor(n), Drain.Meter.NONE);
  }

  /**
   * Drains {@code n} one-time tasks that each run {@code action} with their instance id; {@code
   * meter} is reset before the pool is opened and ticked while the drain is awaited.
   */
  static Drain.Result run(
      Scope scope, int n, int threads, Consumer<String> action, Duration timeout, Drain.Meter meter)
      throws Exception {
    seed(scope, n);
    scope.closePools(); // the setup pool's thread is not the scheduler's
    long before = Drain.settledCommits(scope);
    LongAdder handled = new LongAdder();
    meter.reset();
    // executor threads each need a connection, plus the poller and the housekeeping
    DataSource pool = scope.pool("dbscheduler", threads + 3);
    Scheduler scheduler = scheduler(pool, threads, "bench-dbs-1", task(handled, action));
    long monitorQueries;
    double seconds;
    try {
      long t0 = System.nanoTime();
      meter.started();
      scheduler.start();
      monitorQueries = Drain.awaitEmpty(handled, n, scope, TABLE, timeout, meter);
      seconds = (System.nanoTime() - t0) / 1e9;
      meter.drained();
    } finally {
      scheduler.stop();
      scope.closePools();
    }
    long after = Drain.settledCommits(scope);
    return new Drain.Result(
        n, handled.sum(), seconds, Drain.commitsPer1k(before, after, monitorQueries, n));
  }
}
