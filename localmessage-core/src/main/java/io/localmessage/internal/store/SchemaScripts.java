package io.localmessage.internal.store;

import io.localmessage.StoreException;
import io.localmessage.spi.Dialect;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The schema scripts of a dialect, in migration order ({@code V1__localmessage.sql}, then the later
 * steps), and the on-demand creation that brings an existing schema up to date. Flyway or Liquibase
 * run the same files once each; {@link #apply} may run on every start, so it skips an {@code ALTER
 * TABLE} whose changes are already there (a column it adds exists, a column it modifies already has
 * the new type) and runs everything else, which is {@code CREATE ... IF NOT EXISTS}. Splitting a
 * script into statements is written here once; {@link io.localmessage.Schema} is its public face.
 */
public final class SchemaScripts {
  /** The core's later steps, after {@link Dialect#schemaResource()}; missing ones are skipped. */
  private static final List<String> LATER_STEPS =
      List.of("V3__localmessage_keys_requeue.sql", "V4__localmessage_aggregate_lock.sql");

  private static final Pattern ALTER = Pattern.compile("(?is)^ALTER\\s+TABLE\\s+(\\S+)\\s+(.*)$");
  private static final Pattern ADD_COLUMN =
      Pattern.compile("(?i)ADD\\s+COLUMN\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?(\\w+)");
  private static final Pattern MODIFY =
      Pattern.compile("(?i)MODIFY\\s+(?:COLUMN\\s+)?(\\w+)\\s+(\\w+)");

  private SchemaScripts() {}

  /** The core's DDL of {@code dialect}, every step in order, with the default table names. */
  public static String coreDdl(Dialect dialect) {
    StringBuilder sb = new StringBuilder(read(dialect.schemaResource()));
    String folder = dialect.schemaResource();
    folder = folder.substring(0, folder.lastIndexOf('/') + 1);
    for (String step : LATER_STEPS) {
      String ddl = readIfPresent(folder + step);
      if (ddl != null) {
        sb.append('\n').append(ddl);
      }
    }
    return sb.toString();
  }

  /** The DDL of {@code dialect} with the names of {@code tables}: every schema step, in order. */
  public static String ddl(Dialect dialect, Tables tables) {
    String ddl = coreDdl(dialect);
    // index and constraint names derive from the table names, so two engines with different
    // tables can share a schema; a schema prefix applies to table names only
    String table = tables.message();
    String inboxTable = tables.inbox();
    return ddl.replaceAll("(ix|uk)_local_message", "$1_" + bare(table))
        .replaceAll("(ix)_local_inbox", "$1_" + bare(inboxTable))
        .replace("local_message", table)
        .replace("local_inbox", inboxTable);
  }

  /** {@code name} without its schema prefix. */
  static String bare(String name) {
    return name.contains(".") ? name.substring(name.indexOf('.') + 1) : name;
  }

  /**
   * Creates the tables and indexes of {@code tables} that are missing and brings existing ones up
   * to the latest schema step (the same changes a migration tool applies from the shipped scripts).
   */
  public static void create(DataSource dataSource, Dialect dialect, Tables tables) {
    try (Connection c = Transactions.autocommit(dataSource)) {
      applyLocked(c, dialect, tables.message(), split(ddl(dialect, tables)));
    } catch (SQLException e) {
      throw new StoreException("creating the localmessage schema failed: " + e.getMessage(), e);
    }
  }

  /**
   * {@link #apply}s {@code statements} holding the dialect's schema lock named by {@code table}:
   * one replica at a time, since replicas starting together each find the schema missing and would
   * run the same DDL side by side.
   */
  public static void applyLocked(
      Connection c, Dialect dialect, String table, List<String> statements) throws SQLException {
    dialect.lockSchema(c, table);
    try {
      apply(c, statements);
    } finally {
      try {
        dialect.unlockSchema(c, table);
      } catch (SQLException | RuntimeException e) {
        // a broken connection: its session, and the lock with it, ends when the pool drops it
      }
    }
  }

  /** The text of a classpath resource. */
  public static String read(String resource) {
    String ddl = readIfPresent(resource);
    if (ddl == null) {
      throw new IllegalStateException("schema resource " + resource + " is missing");
    }
    return ddl;
  }

  private static String readIfPresent(String resource) {
    try (InputStream in = SchemaScripts.class.getClassLoader().getResourceAsStream(resource)) {
      return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read schema resource " + resource, e);
    }
  }

  /** The statements of a script, without comments and without the final {@code ;}. */
  public static List<String> split(String ddl) {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : ddl.split("\n")) {
      String trimmed = line.strip();
      if (trimmed.startsWith("--") || trimmed.isEmpty()) {
        continue;
      }
      int comment = line.indexOf("--");
      String code = comment >= 0 ? line.substring(0, comment) : line;
      current.append(code).append('\n');
      if (code.strip().endsWith(";")) {
        String sql = current.toString().strip();
        out.add(sql.substring(0, sql.length() - 1).strip());
        current.setLength(0);
      }
    }
    return out;
  }

  /** Runs the statements that still have something to do, through {@code c}. */
  public static void apply(Connection c, List<String> statements) throws SQLException {
    try (Statement st = c.createStatement()) {
      for (String sql : statements) {
        if (needed(c, sql)) {
          st.execute(sql);
        }
      }
    }
  }

  /**
   * Whether {@code sql} would change anything: false only for an {@code ALTER TABLE} all of whose
   * added columns exist and all of whose modified columns have the new type already.
   */
  static boolean needed(Connection c, String sql) throws SQLException {
    Matcher alter = ALTER.matcher(sql.strip());
    if (!alter.matches()) {
      return true;
    }
    Map<String, String> columns = columnTypes(c, alter.group(1));
    if (columns == null) {
      return true;
    }
    Matcher add = ADD_COLUMN.matcher(alter.group(2));
    while (add.find()) {
      if (!columns.containsKey(add.group(1).toUpperCase(Locale.ROOT))) {
        return true;
      }
    }
    Matcher modify = MODIFY.matcher(alter.group(2));
    while (modify.find()) {
      String type = columns.get(modify.group(1).toUpperCase(Locale.ROOT));
      if (type == null || !type.equalsIgnoreCase(modify.group(2))) {
        return true;
      }
    }
    return false;
  }

  /** Column name to type name (upper case), or null when the table cannot be read. */
  private static Map<String, String> columnTypes(Connection c, String table) {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT * FROM " + table + " WHERE 1 = 0")) {
      ResultSetMetaData md = rs.getMetaData();
      Map<String, String> out = new HashMap<>();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        out.put(
            md.getColumnName(i).toUpperCase(Locale.ROOT),
            md.getColumnTypeName(i).toUpperCase(Locale.ROOT));
      }
      return out;
    } catch (SQLException e) {
      return null;
    }
  }
}
