package io.localmessage.bench;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.spi.EngineListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/** Drains a backlog of no-op messages with one or more engines, each with its own pool. */
final class EngineDrain {
  private EngineDrain() {}

  /** What a user would set for throughput; printed with the results. */
  record Settings(int concurrency, int writeBatchSize, int poolSize, Duration pollInterval) {
    /** Messages per claim statement: a claim takes up to every free slot. */
    int claimSize() {
      return concurrency;
    }

    String describe() {
      return "concurrency="
          + concurrency
          + " writeBatchSize="
          + writeBatchSize
          + " pool="
          + poolSize
          + "/replica pollInterval="
          + pollInterval.toMillis()
          + "ms, lease and handler config default";
    }
  }

  static Drain.Result run(Scope scope, int n, int replicas, Settings s) throws Exception {
    Tickets.seed(scope, n);
    long before = Drain.settledCommits(scope);
    LongAdder handled = new LongAdder();
    List<LocalMessages> engines = new ArrayList<>();
    long monitorQueries;
    double seconds;
    try {
      for (int i = 1; i <= replicas; i++) {
        engines.add(build(scope.pool("engine-" + i, s.poolSize()), "bench-" + i, s, handled));
      }
      long t0 = System.nanoTime();
      engines.forEach(LocalMessages::start);
      monitorQueries = Drain.awaitEmpty(handled, n, scope, Tickets.TABLE, Drain.timeoutFor(n));
      seconds = (System.nanoTime() - t0) / 1e9;
    } finally {
      engines.forEach(LocalMessages::close);
      scope.closePools();
    }
    long after = Drain.settledCommits(scope);
    return new Drain.Result(
        n, handled.sum(), seconds, Drain.commitsPer1k(before, after, monitorQueries, n));
  }

  static LocalMessages build(DataSource ds, String replicaId, Settings s, LongAdder handled) {
    return build(ds, replicaId, s, handled, EngineListener.NONE);
  }

  static LocalMessages build(
      DataSource ds, String replicaId, Settings s, LongAdder handled, EngineListener listener) {
    LocalMessages lm =
        LocalMessages.builder(ds)
            .table(Tickets.TABLE)
            .replicaId(replicaId)
            .concurrency(s.concurrency())
            .writeBatchSize(s.writeBatchSize())
            .pollInterval(s.pollInterval())
            .listener(listener)
            .build();
    lm.register(Tickets.TYPE, m -> handled.increment(), HandlerConfig.defaults());
    return lm;
  }
}
