package io.localmessage.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Small JDBC helpers for assertions in tests. */
public final class Sql {
  private Sql() {}

  public static long count(DataSource ds, String sql, Object... args) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  public static int update(DataSource ds, String sql, Object... args) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      int n = ps.executeUpdate();
      if (!c.getAutoCommit()) {
        c.commit();
      }
      return n;
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  /** Runs one statement on {@code c} as it is (no commit): for work inside a transaction. */
  public static int updateOn(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      return ps.executeUpdate();
    }
  }

  public static String string(DataSource ds, String sql, Object... args) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  /** The database clock now, read the way the library reads it. */
  public static java.time.Instant instantNow(TestDatabase db, DataSource ds) {
    String sql =
        switch (db.kind()) {
          case POSTGRESQL -> "SELECT statement_timestamp()";
          case MARIADB -> "SELECT UTC_TIMESTAMP(3)";
          case H2 -> "SELECT CURRENT_TIMESTAMP(3)";
        };
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      if (db.kind() == TestDatabase.Kind.MARIADB) {
        return rs.getObject(1, java.time.LocalDateTime.class).toInstant(java.time.ZoneOffset.UTC);
      }
      return rs.getObject(1, java.time.OffsetDateTime.class).toInstant();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
