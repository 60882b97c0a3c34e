package io.localmessage.spring.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which of the engine's tables exist, asked the database itself ({@code SELECT 1 FROM t WHERE 1 =
 * 0}), so schemas, search paths and the case rules of each database all apply as they do for the
 * engine. Not API.
 */
public final class SchemaCheck {
  private static final Logger log = LoggerFactory.getLogger(SchemaCheck.class);

  /** SQLStates of "no such table": PostgreSQL, MySQL/MariaDB and H2, H2 on an empty database. */
  private static final Set<String> UNDEFINED_TABLE = Set.of("42P01", "42S02", "42S04");

  private SchemaCheck() {}

  /** The engine's tables for a message table and an inbox table name, in creation order. */
  public static List<String> tables(String table, String inboxTable) {
    return List.of(table, table + "_control", table + "_audit", inboxTable);
  }

  /**
   * The engine's tables on the database behind {@code dataSource}: on MySQL/MariaDB and H2 also the
   * lock table of ordered saves (schema step V4; PostgreSQL locks an aggregate without a table), so
   * a schema migrated by hand without that step stops the start instead of the first ordered save.
   * Without the lock table when the database cannot be asked: {@link #missing} then checks nothing.
   */
  public static List<String> tables(DataSource dataSource, String table, String inboxTable) {
    String folder;
    try {
      folder = scriptFolder(dataSource);
    } catch (StartupCheckException unreachable) {
      folder = null;
    }
    if ("mysql".equals(folder) || "h2".equals(folder)) {
      return List.of(table, table + "_control", table + "_audit", table + "_lock", inboxTable);
    }
    return tables(table, inboxTable);
  }

  /**
   * The tables of {@code names} the database says do not exist. Empty also when the database could
   * not be asked (it is down at startup, for example): the engine then retries on its own, and only
   * a missing table is a reason to refuse to start.
   */
  public static List<String> missing(DataSource dataSource, List<String> names) {
    List<String> missing = new ArrayList<>();
    try (Connection c = dataSource.getConnection()) {
      boolean auto = c.getAutoCommit();
      for (String name : names) {
        if (!exists(c, name)) {
          missing.add(name);
        }
      }
      if (!auto) {
        c.rollback(); // leave a pooled connection without an open transaction
      }
    } catch (SQLException e) {
      log.warn("event=schema_check_skipped error={}", e.toString());
      return List.of();
    }
    return missing;
  }

  /** The database product name's dialect folder under {@code db/localmessage}, or null. */
  public static String scriptFolder(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      String product = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
      if (product.contains("postgres")) {
        return "postgresql";
      }
      if (product.contains("mysql") || product.contains("mariadb")) {
        return "mysql";
      }
      if (product.contains("h2")) {
        return "h2";
      }
      return null;
    } catch (SQLException e) {
      throw new StartupCheckException(
          "localmessage could not read the database's product name to choose its schema scripts: "
              + e,
          "Check spring.datasource.* and that the database is reachable.",
          e);
    }
  }

  private static boolean exists(Connection c, String table) throws SQLException {
    // the name was validated as an identifier by the engine's builder
    try (Statement s = c.createStatement()) {
      s.execute("SELECT 1 FROM " + table + " WHERE 1 = 0");
      return true;
    } catch (SQLException e) {
      if (UNDEFINED_TABLE.contains(e.getSQLState())) {
        if (!c.getAutoCommit()) {
          c.rollback(); // PostgreSQL: the failed statement aborted the transaction
        }
        return false;
      }
      throw e;
    }
  }
}
