package io.localmessage.internal.dialect;

import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.MessageRow;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;

/** Column lists and row mapping shared by the dialects. */
final class Columns {
  /** Insert columns; the dialect appends status, attempts, version and the time columns. */
  static final String INSERT =
      "kind, biz_type, idem_key, aggregate_id, destination, payload, headers, max_attempts,"
          + " status, attempts, version, next_retry_at, created_at, updated_at";

  private Columns() {}

  /** The VALUES list for {@link #INSERT}; binds 9 parameters via {@link #bindInsert}. */
  static String insertValues(Dialect d) {
    return "?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, "
        + d.plusMillis(d.now())
        + ", "
        + d.now()
        + ", "
        + d.now();
  }

  /**
   * {@code INSERT INTO table (columns) VALUES (...)} of one message, without the dialect's conflict
   * clause; binds 9 parameters via {@link #bindInsert}.
   */
  static String insert(Dialect d, String table) {
    return "INSERT INTO " + table + " (" + INSERT + ") VALUES (" + insertValues(d) + ")";
  }

  static void bindInsert(PreparedStatement ps, MessageRow r) throws SQLException {
    ps.setInt(1, Codes.of(r.kind()));
    ps.setString(2, r.bizType());
    ps.setString(3, r.idemKey());
    setNullable(ps, 4, r.aggregateId());
    setNullable(ps, 5, r.destination());
    ps.setBytes(6, r.payload());
    setNullable(ps, 7, r.headersJson());
    ps.setInt(8, r.maxAttempts());
    ps.setLong(9, r.delayMillis());
  }

  private static void setNullable(PreparedStatement ps, int i, String v) throws SQLException {
    if (v == null) {
      ps.setNull(i, Types.VARCHAR);
    } else {
      ps.setString(i, v);
    }
  }

  /**
   * The columns a claim reads, with the table alias {@code a}; the dialect appends the database
   * clock as the 14th column and the lease owner before the claim as the 15th.
   */
  static String claimed(String a) {
    return a
        + ".id, "
        + a
        + ".kind, "
        + a
        + ".biz_type, "
        + a
        + ".idem_key, "
        + a
        + ".aggregate_id, "
        + a
        + ".destination, "
        + a
        + ".payload, "
        + a
        + ".headers, "
        + a
        + ".attempts, "
        + a
        + ".max_attempts, "
        + a
        + ".version, "
        + a
        + ".created_at, COALESCE("
        + a
        + ".requeued_at, "
        + a
        + ".created_at)";
  }

  /**
   * Maps a row of {@link #claimed}; {@code bump} adds 1 to attempts and version when the row was
   * read before its update.
   */
  static ClaimedRow mapClaimed(Dialect d, ResultSet rs, int bump) throws SQLException {
    return new ClaimedRow(
        rs.getLong(1),
        Codes.kindOrNull(rs.getInt(2)),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getString(6),
        rs.getBytes(7),
        rs.getString(8),
        rs.getInt(9) + bump,
        rs.getInt(10),
        rs.getLong(11) + bump,
        d.readInstant(rs, 12),
        d.readInstant(rs, 14),
        rs.getString(15) != null,
        d.readInstant(rs, 13));
  }
}
