package io.localmessage.console;

import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Direct SQL for the tests' checks, on a pool of the test database (not the application's). */
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

  /** The Spring Boot properties of a test database. */
  public static String[] datasource(TestDatabase db) {
    return new String[] {
      "spring.datasource.url=" + db.jdbcUrl(),
      "spring.datasource.username=" + db.user(),
      "spring.datasource.password=" + db.password(),
      "spring.datasource.hikari.maximum-pool-size=6"
    };
  }
}
