package io.localmessage.spi;

import io.localmessage.StoreException;
import io.localmessage.internal.dialect.BuiltInDialects;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** The built-in {@link Dialect}s: PostgreSQL, MySQL/MariaDB and H2. */
public final class Dialects {
  private Dialects() {}

  /**
   * The built-in dialect of the database behind {@code c}, from its JDBC metadata.
   *
   * @throws IllegalArgumentException for a database that is not PostgreSQL, MySQL/MariaDB or H2
   * @throws SQLException when the metadata cannot be read
   */
  public static Dialect detect(Connection c) throws SQLException {
    return BuiltInDialects.detect(c);
  }

  /**
   * The built-in dialect of the database behind {@code dataSource}; borrows one connection.
   *
   * @throws IllegalArgumentException for a database that is not PostgreSQL, MySQL/MariaDB or H2
   * @throws StoreException when no connection can be had
   */
  public static Dialect detect(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return BuiltInDialects.detect(c);
    } catch (SQLException e) {
      throw new StoreException("cannot connect to detect the database dialect", e);
    }
  }

  /**
   * The built-in dialect named {@code postgresql} (also {@code postgres}), {@code mysql} (also
   * {@code mariadb}) or {@code h2}, case-insensitive.
   *
   * @throws IllegalArgumentException for another name
   */
  public static Dialect named(String name) {
    return BuiltInDialects.named(name);
  }
}
