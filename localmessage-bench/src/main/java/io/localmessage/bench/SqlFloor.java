package io.localmessage.bench;

import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.Dialects;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * The raw-SQL floor: the engine's own claim and batched, version-checked delete, issued directly
 * over JDBC by plain threads (each with one connection: claim a batch, delete it, repeat) with no
 * engine around them: no worker pool, no handler, no write-behind.
 */
final class SqlFloor {
  private static final long LEASE_MILLIS = 60_000;

  /** Which claim statement the floor issues. */
  enum Variant {
    /** The very statements of the core's {@link Dialect} (PostgreSQL or MySQL/MariaDB). */
    DIALECT,
    /**
     * PostgreSQL only: a textbook single-type CTE claim returning id and version, then the same
     * delete; shows what the dialect's general statement (every type at once through {@code
     * LATERAL}, full rows returned) costs.
     */
    MINIMAL
  }

  private SqlFloor() {}

  static Drain.Result run(Scope scope, int n, int threads, int batch, Variant variant)
      throws Exception {
    Tickets.seed(scope, n);
    long before = Drain.settledCommits(scope);
    DataSource pool = scope.pool("floor", threads);
    LongAdder deleted = new LongAdder();
    LongAdder retries = new LongAdder();
    AtomicInteger names = new AtomicInteger();
    ExecutorService exec =
        Executors.newFixedThreadPool(
            threads, r -> new Thread(r, "bench-floor-" + names.incrementAndGet()));
    double seconds;
    try {
      List<Future<?>> futures = new ArrayList<>();
      long t0 = System.nanoTime();
      for (int i = 0; i < threads; i++) {
        String owner = "floor-" + i;
        futures.add(
            exec.submit(
                () -> {
                  try (Connection c = pool.getConnection()) {
                    loop(c, batch, variant, owner, deleted, retries);
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get(Drain.timeoutFor(n).toMillis(), TimeUnit.MILLISECONDS);
      }
      seconds = (System.nanoTime() - t0) / 1e9;
    } finally {
      exec.shutdownNow();
      exec.awaitTermination(10, TimeUnit.SECONDS);
      scope.closePools();
    }
    long left = scope.count(Tickets.TABLE);
    if (left != 0 || deleted.sum() != n) {
      throw new IllegalStateException(
          "floor drain incomplete: deleted " + deleted.sum() + " of " + n + ", left " + left);
    }
    long after = Drain.settledCommits(scope);
    return new Drain.Result(
        n, deleted.sum(), seconds, Drain.commitsPer1k(before, after, 0, n), retries.sum());
  }

  private static void loop(
      Connection c, int batch, Variant variant, String owner, LongAdder deleted, LongAdder retries)
      throws SQLException {
    Dialect dialect = Dialects.detect(c);
    ClaimRequest request =
        new ClaimRequest(
            List.of(new ClaimRequest.TypeLimit(Tickets.TYPE, batch, false, 10)),
            LEASE_MILLIS,
            owner,
            null);
    while (true) {
      long[][] claimed =
          retrying(
              retries,
              () ->
                  variant == Variant.DIALECT
                      ? idsAndVersions(dialect.claim(c, Tickets.TABLE, request))
                      : claimMinimal(c, batch, owner));
      if (claimed[0].length == 0) {
        return;
      }
      deleted.add(
          retrying(
              retries, () -> dialect.deleteIfCurrent(c, Tickets.TABLE, claimed[0], claimed[1])));
    }
  }

  private interface SqlCall<T> {
    T call() throws SQLException;
  }

  /**
   * Repeats a statement that lost a deadlock (SQLState 40001; InnoDB picks a victim among
   * concurrent claims and deletes), as any raw-SQL worker on MariaDB has to.
   */
  private static <T> T retrying(LongAdder retries, SqlCall<T> call) throws SQLException {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.call();
      } catch (SQLException e) {
        if (!"40001".equals(e.getSQLState()) || attempt >= 100) {
          throw e;
        }
        retries.increment();
      }
    }
  }

  private static long[][] idsAndVersions(List<ClaimedRow> rows) {
    long[] ids = new long[rows.size()];
    long[] versions = new long[rows.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = rows.get(i).id();
      versions[i] = rows.get(i).version();
    }
    return new long[][] {ids, versions};
  }

  static final String MINIMAL_CLAIM =
      "WITH due AS (SELECT id FROM "
          + Tickets.TABLE
          + " WHERE biz_type = ? AND status = 0 AND next_retry_at <= statement_timestamp()"
          + " AND attempts < max_attempts ORDER BY next_retry_at LIMIT ? FOR UPDATE SKIP LOCKED)"
          + " UPDATE "
          + Tickets.TABLE
          + " t SET attempts = t.attempts + 1, version = t.version + 1,"
          + " next_retry_at = statement_timestamp() + ? * interval '1 millisecond',"
          + " lease_owner = ?, updated_at = statement_timestamp()"
          + " FROM due WHERE t.id = due.id RETURNING t.id, t.version";

  private static long[][] claimMinimal(Connection c, int batch, String owner) throws SQLException {
    List<long[]> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(MINIMAL_CLAIM)) {
      ps.setString(1, Tickets.TYPE);
      ps.setInt(2, batch);
      ps.setLong(3, LEASE_MILLIS);
      ps.setString(4, owner);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new long[] {rs.getLong(1), rs.getLong(2)});
        }
      }
    }
    long[] ids = new long[rows.size()];
    long[] versions = new long[rows.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = rows.get(i)[0];
      versions[i] = rows.get(i)[1];
    }
    return new long[][] {ids, versions};
  }
}
