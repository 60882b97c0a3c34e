package io.localmessage.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Statements per second that one replica issues with nothing to do, counted by a wrapper around its
 * data source (pg_stat_statements needs a server restart to load, so it is not relied on).
 */
final class IdleCost {
  private IdleCost() {}

  static double engine(Scope scope, Duration pollInterval, Duration window) {
    Tickets.createSchema(scope);
    CountingDataSource counting = new CountingDataSource(scope.pool("idle", 4));
    LocalMessages lm =
        LocalMessages.builder(counting.dataSource())
            .table(Tickets.TABLE)
            .replicaId("bench-idle")
            .pollInterval(pollInterval)
            .build();
    lm.register(Tickets.TYPE, m -> {}, HandlerConfig.defaults());
    try {
      lm.start();
      return measure(counting, window);
    } finally {
      lm.close();
      scope.closePools();
    }
  }

  static double dbScheduler(Scope scope, int threads, Duration window) {
    DbSchedulerDrain.createSchema(scope);
    CountingDataSource counting = new CountingDataSource(scope.pool("idle", threads + 3));
    Scheduler s =
        DbSchedulerDrain.scheduler(counting.dataSource(), threads, "bench-idle", new LongAdder());
    try {
      s.start();
      return measure(counting, window);
    } finally {
      s.stop();
      scope.closePools();
    }
  }

  private static double measure(CountingDataSource counting, Duration window) {
    // past start-up work (schema checks, first polls), then a clean window
    LockSupport.parkNanos(Math.min(TimeUnit.SECONDS.toNanos(1), window.toNanos()));
    counting.reset();
    long t0 = System.nanoTime();
    LockSupport.parkNanos(window.toNanos());
    double seconds = (System.nanoTime() - t0) / 1e9;
    return counting.statements.sum() / seconds;
  }
}
