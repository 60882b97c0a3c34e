package io.localmessage.internal.store;

import io.localmessage.StoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/** The few JDBC steps every store repeats. */
final class Jdbc {
  private Jdbc() {}

  /** Binds the parameters of a prepared statement. */
  interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** The smallest biz type of {@code table} above {@code after} (null: the smallest), one probe. */
  static String nextBizType(DataSource dataSource, String table, String after) {
    String sql =
        "SELECT MIN(biz_type) FROM " + table + (after == null ? "" : " WHERE biz_type > ?");
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps = c.prepareStatement(sql)) {
      if (after != null) {
        ps.setString(1, after);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    } catch (SQLException e) {
      throw new StoreException("listing biz types failed: " + e.getMessage(), e);
    }
  }

  /** The one number {@code sql} answers, read on an autocommit connection. */
  static long queryLong(DataSource dataSource, String sql, Binder binder, String what) {
    try (Connection c = Transactions.autocommit(dataSource);
        PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    } catch (SQLException e) {
      throw new StoreException(what + " failed: " + e.getMessage(), e);
    }
  }
}
