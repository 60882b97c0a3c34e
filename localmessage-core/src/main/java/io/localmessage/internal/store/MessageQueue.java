package io.localmessage.internal.store;

import io.localmessage.StoreException;
import io.localmessage.internal.dialect.Predicates;
import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.MessageRow;
import io.localmessage.spi.Transition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * The engine's queue: insert in the caller's transaction, claim, write-back, lease renewal and the
 * sweep of expired last attempts. The statements that differ by database come from the {@link
 * Dialect}; everything else here runs on a pooled connection in autocommit, one short statement or
 * transaction each.
 */
public final class MessageQueue {
  /** Messages moved to DEAD per sweep; the next sweep takes the rest. */
  static final int EXPIRE_BATCH = 500;

  private final DataSource dataSource;
  private final Dialect dialect;
  private final String table;

  /** The queue of {@code tables.message()}. */
  public MessageQueue(DataSource dataSource, Dialect dialect, Tables tables) {
    this.dataSource = dataSource;
    this.dialect = dialect;
    this.table = tables.message();
  }

  /** The dialect the statements are built with. */
  public Dialect dialect() {
    return dialect;
  }

  /** Inserts in the caller's transaction; empty for a duplicate {@code (biz_type, idem_key)}. */
  public OptionalLong insert(Connection c, MessageRow row) throws SQLException {
    return dialect.insertIfAbsent(c, table, row);
  }

  /**
   * Locks {@code (bizType, aggregateId)} of an ordered type until the caller's transaction ends
   * (see {@link Dialect#lockAggregateForSave}).
   */
  public void lockAggregateForSave(Connection c, String bizType, String aggregateId)
      throws SQLException {
    dialect.lockAggregateForSave(c, table, bizType, aggregateId);
  }

  /**
   * The id of the message with this key, as the latest committed state (and the caller's own
   * writes) show it, whatever the age of the caller's snapshot.
   */
  public OptionalLong existingId(Connection c, String bizType, String idemKey) throws SQLException {
    return dialect.existingId(c, table, bizType, idemKey);
  }

  /** Claims due messages within the request's limits. */
  public List<ClaimedRow> claim(ClaimRequest request) {
    try (Connection c = Transactions.autocommit(dataSource)) {
      return dialect.claim(c, table, request);
    } catch (SQLException e) {
      throw new StoreException("claiming due messages failed: " + e.getMessage(), e);
    }
  }

  /** Deletes the succeeded messages whose versions still match; returns how many did. */
  public int deleteIfCurrent(long[] ids, long[] versions) {
    try (Connection c = Transactions.autocommit(dataSource)) {
      return dialect.deleteIfCurrent(c, table, ids, versions);
    } catch (SQLException e) {
      throw new StoreException("deleting completed messages failed: " + e.getMessage(), e);
    }
  }

  /** Applies the transitions whose versions still match; returns how many did. */
  public int updateIfCurrent(List<Transition> transitions) {
    try (Connection c = Transactions.autocommit(dataSource)) {
      return dialect.updateIfCurrent(c, table, transitions);
    } catch (SQLException e) {
      throw new StoreException("writing back message outcomes failed: " + e.getMessage(), e);
    }
  }

  /**
   * Extends the leases of the messages whose versions still match; returns the ids that did. Runs
   * on {@code reserved}, the renewer's own connection: a renewal never waits for the pool.
   */
  public Set<Long> renewLeases(
      ReservedConnection reserved, long[] ids, long[] versions, long leaseMillis) {
    try {
      return reserved.use(c -> dialect.renewLeases(c, table, ids, versions, leaseMillis));
    } catch (SQLException e) {
      throw new StoreException("renewing leases failed: " + e.getMessage(), e);
    }
  }

  /** A connection of this queue's pool for one loop to keep (see {@link ReservedConnection}). */
  public ReservedConnection reserveConnection() {
    return new ReservedConnection(dataSource);
  }

  /**
   * What one sweep of exhausted last attempts did: candidates found, messages moved to DEAD.
   *
   * @param found candidates found
   * @param expired messages moved to DEAD
   */
  public record Sweep(int found, int expired) {
    /** Whether the sweep stopped at its batch limit, so more candidates may be left. */
    public boolean limited() {
      return found >= EXPIRE_BATCH;
    }
  }

  /**
   * Moves to DEAD the messages whose last allowed delivery was claimed and never reported back (the
   * worker died or overran its lease), so a message that crashes its worker still ends instead of
   * looping. At most {@value #EXPIRE_BATCH} per call.
   *
   * <p>With a {@code windowMillis} supplier only messages whose lease ended in the last that many
   * milliseconds are looked at: a claim always sets the lease end in the future, so a sweeper that
   * covers consecutive windows sees every lease that runs out, and its cost follows the messages
   * that fell due in the window instead of the whole due backlog (every row of which a full sweep
   * reads, because {@code attempts >= max_attempts} compares two columns no index can serve). The
   * supplier is asked right before the statement runs, after any wait for a connection, so a window
   * measured from the previous sweep leaves no gap. {@code null} looks at every due message.
   */
  public Sweep expireExhausted(
      Collection<String> bizTypes, String error, LongSupplier windowMillis) {
    if (bizTypes.isEmpty()) {
      return new Sweep(0, 0);
    }
    // Find candidates with a plain read first, then update them by id with every condition
    // checked again. A single UPDATE over the due range would, on InnoDB, lock every due message
    // it scans (the whole backlog) and make every replica's SKIP LOCKED claim come back empty.
    String exhausted = " AND " + Predicates.exhausted(dialect);
    String window =
        windowMillis != null ? " AND next_retry_at > " + dialect.plusMillis(dialect.now()) : "";
    String select =
        "SELECT id FROM "
            + table
            + " WHERE biz_type IN ("
            + Predicates.placeholders(bizTypes.size())
            + ")"
            + exhausted
            + window
            + " ORDER BY next_retry_at LIMIT "
            + EXPIRE_BATCH;
    try (Connection c = Transactions.autocommit(dataSource)) {
      List<Long> ids = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(select)) {
        int p = 1;
        for (String t : bizTypes) {
          ps.setString(p++, t);
        }
        if (windowMillis != null) {
          ps.setLong(p, -windowMillis.getAsLong());
        }
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            ids.add(rs.getLong(1));
          }
        }
      }
      if (ids.isEmpty()) {
        return new Sweep(0, 0);
      }
      String update =
          "UPDATE "
              + table
              + " SET status = 2, version = version + 1,"
              + " lease_owner = NULL, last_error = ?, updated_at = "
              + dialect.now()
              + " WHERE id IN ("
              + Predicates.placeholders(ids.size())
              + ")"
              + exhausted;
      try (PreparedStatement ps = c.prepareStatement(update)) {
        int p = 1;
        ps.setString(p++, error);
        for (Long id : ids) {
          ps.setLong(p++, id);
        }
        return new Sweep(ids.size(), ps.executeUpdate());
      }
    } catch (SQLException e) {
      throw new StoreException("expiring exhausted messages failed: " + e.getMessage(), e);
    }
  }
}
