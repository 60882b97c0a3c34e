package io.localmessage.bench;

import io.localmessage.LocalMessages;
import io.localmessage.spi.EngineListener;
import java.sql.Connection;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Why the engine and the floor differ (PostgreSQL): one engine drain with every statement counted
 * by kind and every claim's size and query time observed, and EXPLAIN ANALYZE of the engine's
 * claim, of a minimal claim and of the batched delete on a fresh backlog. Runs once per run, not
 * per repetition; its output goes to the Diagnostics section of the report.
 */
final class Diagnose {
  private Diagnose() {}

  static List<String> run(BenchDatabase db, int n, EngineDrain.Settings s) throws Exception {
    List<String> out = new ArrayList<>();
    String claimSql;
    try (Scope scope = db.newScope()) {
      Tickets.seed(scope, n);
      CountingDataSource counting = new CountingDataSource(scope.pool("diag", s.poolSize()));
      LongAdder handled = new LongAdder();
      LongAdder claims = new LongAdder();
      LongAdder claimed = new LongAdder();
      LongAdder claimNanos = new LongAdder();
      EngineListener listener =
          new EngineListener() {
            @Override
            public void claimed(String type, int count, int reclaims, Duration queryTime) {
              claims.increment();
              claimed.add(count);
              claimNanos.add(queryTime.toNanos());
            }
          };
      LocalMessages lm =
          EngineDrain.build(counting.dataSource(), "bench-diag", s, handled, listener);
      double seconds = Drain.timeOne(lm, handled, n, scope);
      out.add(
          String.format(
              Locale.ROOT,
              "engine x1 drain of %,d with a statement-counting data source: %,.0f tickets/s;"
                  + " %,d claim statements that returned rows, %.1f tickets per claim on average"
                  + " (limit %d), %.2f ms per claim statement",
              n,
              n / seconds,
              claims.sum(),
              claimed.sum() / (double) Math.max(1, claims.sum()),
              s.claimSize(),
              claimNanos.sum() / 1e6 / Math.max(1, claims.sum())));
      StringBuilder kinds = new StringBuilder("statements per 1,000 tickets by kind: ");
      for (Map.Entry<String, Long> e : counting.byKind().entrySet()) {
        kinds.append(
            String.format(Locale.ROOT, "%s %.1f; ", e.getKey(), e.getValue() * 1000.0 / n));
      }
      Long deletes = counting.byKind().get("DELETE FROM");
      if (deletes != null && deletes > 0) {
        kinds.append(String.format(Locale.ROOT, "%.1f tickets per delete", n / (double) deletes));
      }
      out.add(kinds.toString().strip());
      out.add(
          String.format(
              Locale.ROOT,
              "the floor, by construction: %.1f claims and %.1f deletes per 1,000 tickets"
                  + " (%d per statement)",
              1000.0 / s.claimSize(),
              1000.0 / s.claimSize(),
              s.claimSize()));
      claimSql =
          counting.sqlByKind().entrySet().stream()
              .filter(e -> e.getKey().startsWith("WITH"))
              .map(Map.Entry::getValue)
              .findFirst()
              .orElse(null);
    }
    if (claimSql != null) {
      try (Scope scope = db.newScope()) {
        Tickets.seed(scope, n);
        try (Connection c = scope.connect()) {
          Binder minimal =
              ps -> {
                ps.setString(1, Tickets.TYPE);
                ps.setInt(2, s.claimSize());
                ps.setLong(3, 60_000);
                ps.setString(4, "diag");
              };
          // each explained twice, alternating, and the second kept: the first execution in a
          // session pays for catalog lookups and cold pages that the other one would not
          explain(c, claimSql, s.claimSize());
          explain(c, SqlFloor.MINIMAL_CLAIM, minimal);
          out.add(
              "EXPLAIN ANALYZE, engine claim (limit "
                  + s.claimSize()
                  + ", backlog "
                  + n
                  + ", second execution): "
                  + explain(c, claimSql, s.claimSize()));
          out.add(
              "EXPLAIN ANALYZE, minimal single-type claim (second execution): "
                  + explain(c, SqlFloor.MINIMAL_CLAIM, minimal));
        }
      }
    }
    return out;
  }

  /**
   * Runs EXPLAIN (ANALYZE, BUFFERS) in a transaction that is rolled back; the plan on one line.
   * Parameters are bound by their declared types, so the same code explains whichever form of the
   * claim the installed core issues: string arrays get the biz type, int arrays the limit, boolean
   * arrays false, numbers the lease, the last plain string the owner and other strings the type.
   */
  private static String explain(Connection c, String sql, int limit) throws SQLException {
    return explain(c, sql, ps -> bindByType(c, ps, limit));
  }

  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  private static String explain(Connection c, String sql, Binder binder) throws SQLException {
    c.setAutoCommit(false);
    try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, BUFFERS) " + sql)) {
      binder.bind(ps);
      StringBuilder plan = new StringBuilder();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String line = rs.getString(1).strip();
          if (line.startsWith("Buffers") || line.startsWith("Planning:")) {
            continue;
          }
          plan.append(plan.length() == 0 ? "" : " | ").append(line);
        }
      }
      return "`" + plan.toString().replaceAll("\\s+", " ") + "`";
    } finally {
      c.rollback();
      c.setAutoCommit(true);
    }
  }

  private static void bindByType(Connection c, PreparedStatement ps, int limit)
      throws SQLException {
    ParameterMetaData md = ps.getParameterMetaData();
    int count = md.getParameterCount();
    int lastString = 0;
    for (int i = 1; i <= count; i++) {
      String t = md.getParameterTypeName(i);
      if (t.equals("varchar") || t.equals("text")) {
        lastString = i;
      }
    }
    for (int i = 1; i <= count; i++) {
      String t = md.getParameterTypeName(i);
      switch (t) {
        case "_varchar", "_text" ->
            ps.setArray(i, c.createArrayOf("varchar", new String[] {Tickets.TYPE}));
        case "_int4", "_int8" -> ps.setArray(i, c.createArrayOf("int4", new Integer[] {limit}));
        case "_bool" -> ps.setArray(i, c.createArrayOf("bool", new Boolean[] {false}));
        case "varchar", "text" -> ps.setString(i, i == lastString ? "diag" : Tickets.TYPE);
        case "int4" -> ps.setInt(i, limit);
        default -> ps.setLong(i, 60_000);
      }
    }
  }
}
