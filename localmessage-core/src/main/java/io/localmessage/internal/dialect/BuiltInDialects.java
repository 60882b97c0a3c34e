package io.localmessage.internal.dialect;

import io.localmessage.spi.Dialect;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

/** The built-in dialects, picked from JDBC metadata or by name. */
public final class BuiltInDialects {
  private BuiltInDialects() {}

  /**
   * Whether {@code d} is the built-in PostgreSQL dialect, whose statements can bind arrays (an
   * {@code id = ANY(?)} keeps a generic plan on the primary key).
   */
  public static boolean isPostgres(Dialect d) {
    return d instanceof PostgresDialect;
  }

  /** The dialect for the database behind {@code c}; throws for an unsupported product. */
  public static Dialect detect(Connection c) throws SQLException {
    DatabaseMetaData md = c.getMetaData();
    String product = md.getDatabaseProductName();
    String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (p.contains("postgresql")) {
      return new PostgresDialect();
    }
    if (p.contains("mysql") || p.contains("mariadb")) {
      return new MySqlDialect();
    }
    if (p.contains("h2")) {
      return new H2Dialect();
    }
    throw new IllegalArgumentException(
        "unsupported database '"
            + product
            + "': supported are PostgreSQL, MySQL/MariaDB and H2; pass a Dialect to the builder");
  }

  /** The dialect named {@code postgresql}, {@code mysql} (also {@code mariadb}) or {@code h2}. */
  public static Dialect named(String name) {
    switch (name == null ? "" : name.toLowerCase(Locale.ROOT)) {
      case "postgresql":
      case "postgres":
        return new PostgresDialect();
      case "mysql":
      case "mariadb":
        return new MySqlDialect();
      case "h2":
        return new H2Dialect();
      default:
        throw new IllegalArgumentException(
            "unknown dialect '" + name + "': use postgresql, mysql, mariadb or h2");
    }
  }
}
