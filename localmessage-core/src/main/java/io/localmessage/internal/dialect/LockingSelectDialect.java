package io.localmessage.internal.dialect;

import io.localmessage.internal.store.Transactions;
import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

/**
 * Databases without {@code UPDATE ... RETURNING}: a claim is a short transaction of {@code SELECT
 * ... FOR UPDATE SKIP LOCKED} per type followed by one {@code UPDATE ... WHERE id IN (...)}.
 *
 * <p>For ordered types the heads of their aggregates are found first by a non-locking read, then
 * locked by id with the due conditions checked again under the lock. The ordering check cannot sit
 * inside the locking statement: there a subquery may itself lock, and with {@code SKIP LOCKED} it
 * would then skip an in-flight head and let its successor run. Nor can it run after a plain {@code
 * LIMIT}: the limit could fill up with blocked successors every time and starve the heads.
 */
abstract class LockingSelectDialect extends Dialect {

  @Override
  public List<ClaimedRow> claim(Connection c, String table, ClaimRequest request)
      throws SQLException {
    beginShortTransaction(c);
    return Transactions.shortTransaction(
        c,
        tx -> {
          List<ClaimedRow> rows = new ArrayList<>();
          for (ClaimRequest.TypeLimit type : request.types()) {
            List<Long> only = request.onlyIds();
            if (type.ordered()) {
              only = heads(c, table, type, only);
              if (only.isEmpty()) {
                continue;
              }
            }
            List<ClaimedRow> due = selectDue(c, table, type, only);
            if (!due.isEmpty()) {
              markClaimed(c, table, due, request, type.maxAttempts());
              for (ClaimedRow r : due) {
                rows.add(r.maxAttempts() != 0 ? r : withMaxAttempts(r, type.maxAttempts()));
              }
            }
          }
          return rows;
        });
  }

  private List<ClaimedRow> selectDue(
      Connection c, String table, ClaimRequest.TypeLimit type, List<Long> onlyIds)
      throws SQLException {
    String idFilter = onlyIds == null ? "" : " AND m.id IN (" + placeholders(onlyIds.size()) + ")";
    String sql =
        "SELECT "
            + Columns.claimed("m")
            + ", "
            + now()
            + ", m.lease_owner FROM "
            + table
            + " m WHERE "
            + Predicates.due(this, "m")
            + idFilter
            + " ORDER BY m.next_retry_at LIMIT ? FOR UPDATE SKIP LOCKED";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bindTypeIdsLimit(ps, type, onlyIds);
      List<ClaimedRow> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(Columns.mapClaimed(this, rs, 1));
        }
      }
      return rows;
    }
  }

  /**
   * Ids of due messages that head their aggregate (no older PENDING or DEAD message), non-locking.
   */
  private List<Long> heads(
      Connection c, String table, ClaimRequest.TypeLimit type, List<Long> onlyIds)
      throws SQLException {
    String idFilter = onlyIds == null ? "" : " AND m.id IN (" + placeholders(onlyIds.size()) + ")";
    String sql =
        "SELECT m.id FROM "
            + table
            + " m WHERE "
            + Predicates.due(this, "m")
            + idFilter
            + " AND "
            + Predicates.headOfAggregate(table, "m")
            + " ORDER BY m.next_retry_at LIMIT ?";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      bindTypeIdsLimit(ps, type, onlyIds);
      List<Long> ids = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
      return ids;
    }
  }

  private static ClaimedRow withMaxAttempts(ClaimedRow r, int maxAttempts) {
    return new ClaimedRow(
        r.id(),
        r.kind(),
        r.bizType(),
        r.idemKey(),
        r.aggregateId(),
        r.destination(),
        r.payload(),
        r.headersJson(),
        r.attempts(),
        maxAttempts,
        r.version(),
        r.createdAt(),
        r.dbNow(),
        r.leaseExpired(),
        r.ageFrom());
  }

  private void markClaimed(
      Connection c, String table, List<ClaimedRow> rows, ClaimRequest r, int maxAttempts)
      throws SQLException {
    String sql =
        "UPDATE "
            + table
            + " SET attempts = attempts + 1, version = version + 1,"
            + " max_attempts = CASE WHEN max_attempts = 0 THEN ? ELSE max_attempts END,"
            + " next_retry_at = "
            + plusMillis(now())
            + ", lease_owner = ?, updated_at = "
            + now()
            + " WHERE id IN ("
            + placeholders(rows.size())
            + ")";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int p = 1;
      ps.setInt(p++, maxAttempts);
      ps.setLong(p++, r.leaseMillis());
      ps.setString(p++, r.owner());
      for (ClaimedRow row : rows) {
        ps.setLong(p++, row.id());
      }
      ps.executeUpdate();
    }
  }

  @Override
  public int deleteIfCurrent(Connection c, String table, long[] ids, long[] versions)
      throws SQLException {
    // the id list lets the primary key find the rows; each row then keeps its own version check
    StringJoiner pairs = new StringJoiner(", ");
    for (int i = 0; i < ids.length; i++) {
      pairs.add("(?, ?)");
    }
    String sql =
        "DELETE FROM "
            + table
            + " WHERE id IN ("
            + placeholders(ids.length)
            + ") AND (id, version) IN ("
            + pairs
            + ") AND status = 0";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int p = 1;
      for (long id : ids) {
        ps.setLong(p++, id);
      }
      for (int i = 0; i < ids.length; i++) {
        ps.setLong(p++, ids[i]);
        ps.setLong(p++, versions[i]);
      }
      return ps.executeUpdate();
    }
  }

  private static String placeholders(int n) {
    return Predicates.placeholders(n);
  }

  /** Binds the type, the optional id filter and the limit of a due-message select. */
  private static void bindTypeIdsLimit(
      PreparedStatement ps, ClaimRequest.TypeLimit type, List<Long> onlyIds) throws SQLException {
    int p = 1;
    ps.setString(p++, type.bizType());
    if (onlyIds != null) {
      for (Long id : onlyIds) {
        ps.setLong(p++, id);
      }
    }
    ps.setInt(p, type.limit());
  }
}
