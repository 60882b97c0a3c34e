package io.localmessage.console.internal;

import io.localmessage.internal.store.Transactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Token-mode logouts, shared by every replica through the engine's control table: one row per
 * revoked login, whose {@code biz_type} is {@value #PREFIX} followed by the login's expiry (epoch
 * seconds) and its session id. Biz types start with a letter or digit, so these rows can never be a
 * real type; they are never paused ({@code paused = 0}), so the engine ignores them. A row is
 * deleted once its login would have expired anyway.
 *
 * <p>When the table cannot be read, a login is treated as revoked: the console fails closed.
 */
public final class TokenRevocations {
  private static final Logger log = LoggerFactory.getLogger(TokenRevocations.class);
  static final String PREFIX = "~console-revoked:";

  private final DataSource dataSource;
  private final String controlTable;
  private final Clock clock;

  /** Revocation is forever: a session seen revoked need not be asked about again. */
  private final Set<String> knownRevoked = ConcurrentHashMap.newKeySet();

  public TokenRevocations(DataSource dataSource, String controlTable, Clock clock) {
    this.dataSource = dataSource;
    this.controlTable = controlTable;
    this.clock = clock;
  }

  static String key(TokenSessions.Session s) {
    return PREFIX + s.expiresAtEpochSecond() + ":" + s.id();
  }

  public boolean isRevoked(TokenSessions.Session s) {
    String key = key(s);
    if (knownRevoked.contains(key)) {
      return true;
    }
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps =
            c.prepareStatement("SELECT 1 FROM " + controlTable + " WHERE biz_type = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          knownRevoked.add(key);
          return true;
        }
        return false;
      }
    } catch (SQLException e) {
      log.warn("event=console_revocation_check_failed error={}", e.toString());
      return true;
    }
  }

  /** Revokes {@code s} on every replica; true when the revocation is stored. */
  public boolean revoke(TokenSessions.Session s) {
    String key = key(s);
    knownRevoked.add(key);
    try (Connection c = Transactions.autocommit(dataSource)) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO "
                  + controlTable
                  + " (biz_type, paused, updated_by, reason) VALUES (?, 0, ?, 'console logout')")) {
        ps.setString(1, key);
        ps.setString(2, s.name());
        ps.executeUpdate();
      } catch (SQLException e) {
        if (e.getSQLState() == null || !e.getSQLState().startsWith("23")) {
          throw e;
        }
        // already revoked (a second logout with the same cookie)
      }
      deleteExpired(c);
      return true;
    } catch (SQLException e) {
      log.warn("event=console_revocation_failed error={}", e.toString());
      return false;
    }
  }

  /** Rows of logins that have expired by now: the signature check refuses those already. */
  private void deleteExpired(Connection c) throws SQLException {
    long now = clock.instant().getEpochSecond();
    List<String> expired = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement("SELECT biz_type FROM " + controlTable + " WHERE biz_type LIKE ?")) {
      ps.setString(1, PREFIX + "%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String key = rs.getString(1);
          int end = key.indexOf(':', PREFIX.length());
          try {
            if (end > 0 && Long.parseLong(key.substring(PREFIX.length(), end)) < now) {
              expired.add(key);
            }
          } catch (NumberFormatException ignored) {
            // not one of ours
          }
        }
      }
    }
    if (expired.isEmpty()) {
      return;
    }
    try (PreparedStatement ps =
        c.prepareStatement("DELETE FROM " + controlTable + " WHERE biz_type = ?")) {
      for (String key : expired) {
        ps.setString(1, key);
        ps.addBatch();
        knownRevoked.remove(key);
      }
      ps.executeBatch();
    }
  }
}
