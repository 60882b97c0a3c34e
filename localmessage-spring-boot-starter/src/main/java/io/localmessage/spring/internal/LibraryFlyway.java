package io.localmessage.spring.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the library's own schema scripts ({@code classpath:db/localmessage/<dialect>}) with Flyway,
 * in a schema history of their own, apart from the application's: the application's migrations keep
 * every version number, and the library's steps never collide with them. Loaded only when Flyway is
 * on the classpath. Not API.
 */
public final class LibraryFlyway {
  private static final Logger log = LoggerFactory.getLogger(LibraryFlyway.class);

  private LibraryFlyway() {}

  /**
   * Migrates the library's tables on {@code dataSource} and records the steps in {@code
   * historyTable}.
   *
   * @param ticketTable the message table the scripts create, to recognise tables made before this
   *     history existed
   * @return what Flyway did
   */
  public static MigrateResult migrate(
      DataSource dataSource, String historyTable, String ticketTable) {
    String folder = SchemaCheck.scriptFolder(dataSource);
    if (folder == null) {
      throw new StartupCheckException(
          "localmessage ships schema scripts for PostgreSQL, MySQL/MariaDB and H2 only, and this"
              + " database is none of them",
          "Create the tables yourself (LocalMessages.schemaDdl() prints the statements), and set"
              + " localmessage.schema.flyway.enabled=false.");
    }
    String location = "classpath:db/localmessage/" + folder;
    FluentConfiguration config =
        Flyway.configure(LibraryFlyway.class.getClassLoader())
            .dataSource(dataSource)
            .table(historyTable)
            .locations(location)
            // the application's tables are in the same schema: start this history anyway
            .baselineOnMigrate(true)
            .baselineVersion("0")
            .baselineDescription("localmessage")
            // localmessage-kafka's step 2 may join after step 3 was applied
            .outOfOrder(true);
    // Tables that exist without this history were made another way (schema.initialize, or the
    // scripts copied into the application's migrations): adopt them at the step they reached.
    if (config.load().info().applied().length == 0 && exists(dataSource, ticketTable)) {
      String baseline = hasColumn(dataSource, ticketTable, "requeued_at") ? "3" : "1";
      log.info(
          "event=schema_adopted history={} table={} baseline_version={}",
          historyTable,
          ticketTable,
          baseline);
      config.baselineVersion(baseline);
    }
    Flyway flyway = config.load();
    MigrateResult result = flyway.migrate();
    List<String> applied = result.migrations.stream().map(m -> m.version).toList();
    log.info(
        "event=schema_migrated history={} location={} applied={} version={}",
        historyTable,
        location,
        applied,
        result.targetSchemaVersion == null
            ? result.initialSchemaVersion
            : result.targetSchemaVersion);
    return result;
  }

  private static boolean exists(DataSource dataSource, String table) {
    return SchemaCheck.missing(dataSource, List.of(table)).isEmpty();
  }

  private static boolean hasColumn(DataSource dataSource, String table, String column) {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT * FROM " + table + " WHERE 1 = 0")) {
      for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
        if (rs.getMetaData().getColumnName(i).equalsIgnoreCase(column)) {
          return true;
        }
      }
      return false;
    } catch (SQLException e) {
      throw new StartupCheckException(
          "localmessage could not read the columns of " + table + ": " + e,
          "Check that the database is reachable and the application's user may read " + table + ".",
          e);
    }
  }
}
