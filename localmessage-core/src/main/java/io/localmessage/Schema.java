package io.localmessage;

import io.localmessage.internal.store.SchemaScripts;
import io.localmessage.internal.store.Tables;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.Dialects;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The library's tables, for those who create them outside an engine: a migration, a tool, a test.
 * The scripts ship per dialect as classpath resources, {@code
 * db/localmessage/<dialect>/V1__localmessage.sql} and the later steps, usable by Flyway as they
 * are; these methods read the same files. The tables are the message table ({@code local_message}
 * by default), its {@code _control} and {@code _audit} tables and the inbox ({@code local_inbox}).
 * Their columns are documented in the scripts; the audit table's {@code ticket_id} column (the id
 * of the message acted on) keeps its historical name, as do the {@code tickets=} fields of the log
 * lines.
 */
public final class Schema {
  private Schema() {}

  /** The shipped DDL of {@code dialect}, every step in order, with the default table names. */
  public static String ddl(Dialect dialect) {
    return SchemaScripts.coreDdl(Objects.requireNonNull(dialect, "dialect"));
  }

  /**
   * The DDL of {@code dialect} for the message table {@code table} and the inbox {@code inboxTable}
   * (index names follow the table names), every step in order.
   *
   * @throws IllegalArgumentException when a name is not a plain SQL identifier
   */
  public static String ddl(Dialect dialect, String table, String inboxTable) {
    Objects.requireNonNull(dialect, "dialect");
    return SchemaScripts.ddl(dialect, tables(table, inboxTable));
  }

  /**
   * Creates the tables that are missing on the database behind {@code dataSource} (dialect
   * detected) and brings existing ones up to the latest step, as {@link
   * LocalMessagesBuilder#autoCreateSchema(boolean)} does. Safe to run on every start.
   */
  public static void create(DataSource dataSource, String table, String inboxTable) {
    Objects.requireNonNull(dataSource, "dataSource");
    Tables t = tables(table, inboxTable);
    SchemaScripts.create(dataSource, Dialects.detect(dataSource), t);
  }

  /** The statements of a schema script, without comments and without the final {@code ;}. */
  public static List<String> statements(String script) {
    return SchemaScripts.split(Objects.requireNonNull(script, "script"));
  }

  /**
   * Runs the statements that still have something to do through {@code c}: an {@code ALTER TABLE}
   * whose added columns exist and whose modified columns have the new type already is skipped;
   * every other statement runs (the scripts create with {@code IF NOT EXISTS}).
   */
  public static void apply(Connection c, List<String> statements) throws SQLException {
    SchemaScripts.apply(c, statements);
  }

  /**
   * {@link #apply}s {@code statements} holding {@code dialect}'s schema lock named by {@code table}
   * (PostgreSQL: an advisory lock, MySQL/MariaDB: {@code GET_LOCK}, H2: a JVM lock): replicas that
   * start together and each find the tables missing take turns instead of racing in the catalog.
   */
  public static void applyLocked(
      Connection c, Dialect dialect, String table, List<String> statements) throws SQLException {
    SchemaScripts.applyLocked(c, dialect, table, statements);
  }

  /** The text of a schema script on the classpath, e.g. another module's later step. */
  public static String read(String resource) {
    return SchemaScripts.read(resource);
  }

  private static Tables tables(String table, String inboxTable) {
    LocalMessagesBuilder.checkTableName("table", table);
    LocalMessagesBuilder.checkTableName("inboxTable", inboxTable);
    return Tables.of(table, inboxTable);
  }
}
