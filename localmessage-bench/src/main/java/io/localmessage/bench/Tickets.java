package io.localmessage.bench;

import io.localmessage.Schema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/** The engine's tables in a scope, and a backlog of due messages bulk-loaded into them. */
final class Tickets {
  static final String TABLE = "local_message";
  static final String TYPE = "bench.noop";

  /** Payload size of every seeded message: a small JSON document's worth. */
  static final int PAYLOAD_BYTES = 64;

  private static final int CHUNK = 100_000;

  private Tickets() {}

  /** Creates the engine's tables in {@code scope}. */
  static void createSchema(Scope scope) {
    Schema.create(scope.setupDataSource(), TABLE, "local_inbox");
  }

  /** Creates the tables, loads {@code n} due messages of {@link #TYPE} and analyzes the table. */
  static void seed(Scope scope, int n) {
    createSchema(scope);
    seedRows(scope, n, 0);
  }

  /** Loads {@code n} due messages with keys after {@code offset}; the tables must exist. */
  static void seedRows(Scope scope, int n, int offset) {
    seedRows(scope, n, offset, TYPE, null);
  }

  /**
   * Creates the tables and loads {@code n} due messages of {@code type} addressed to {@code
   * destination} (null: none), then analyzes the table.
   */
  static void seed(Scope scope, int n, String type, String destination) {
    createSchema(scope);
    seedRows(scope, n, 0, type, destination);
  }

  private static void seedRows(Scope scope, int n, int offset, String type, String destination) {
    String sql =
        scope.isPostgres()
            ? "INSERT INTO "
                + TABLE
                + " (kind, biz_type, idem_key, destination, payload, max_attempts, status,"
                + " attempts, version, next_retry_at, created_at, updated_at)"
                + " SELECT 1, ?, 'k-' || g, ?, ?, 10, 0, 0, 0, now() - interval '1 second', now(),"
                + " now() FROM generate_series(?, ?) g"
            : null;
    try (Connection c = scope.connect()) {
      c.setAutoCommit(false);
      byte[] payload = new byte[PAYLOAD_BYTES];
      java.util.Arrays.fill(payload, (byte) 'x');
      for (int from = offset + 1; from <= offset + n; from += CHUNK) {
        int to = Math.min(offset + n, from + CHUNK - 1);
        String stmt =
            sql != null
                ? sql
                : "INSERT INTO "
                    + TABLE
                    + " (kind, biz_type, idem_key, destination, payload, max_attempts, status,"
                    + " attempts, version, next_retry_at, created_at, updated_at)"
                    + " SELECT 1, ?, CONCAT('k-', seq), ?, ?, 10, 0, 0, 0,"
                    + " UTC_TIMESTAMP(3) - INTERVAL 1 SECOND, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)"
                    + " FROM seq_"
                    + from
                    + "_to_"
                    + to;
        try (PreparedStatement ps = c.prepareStatement(stmt)) {
          ps.setString(1, type);
          ps.setString(2, destination);
          ps.setBytes(3, payload);
          if (sql != null) {
            ps.setInt(4, from);
            ps.setInt(5, to);
          }
          ps.executeUpdate();
        }
        c.commit();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("seeding tickets failed: " + e.getMessage(), e);
    }
    scope.analyze(TABLE);
  }
}
