package io.localmessage.console;

import io.localmessage.testing.TestDatabase;
import javax.sql.DataSource;

/** The tests' direct SQL checks: the core test support, plus this module's Spring properties. */
public final class Sql {
  private Sql() {}

  public static long count(DataSource ds, String sql, Object... args) {
    return io.localmessage.testing.Sql.count(ds, sql, args);
  }

  public static int update(DataSource ds, String sql, Object... args) {
    return io.localmessage.testing.Sql.update(ds, sql, args);
  }

  /** The Spring Boot properties of a test database. */
  public static String[] datasource(TestDatabase db) {
    return db.springDataSourceProperties(6);
  }
}
