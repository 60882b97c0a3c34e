package io.localmessage.spring.internal;

import io.localmessage.spring.LocalMessageProperties;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The starter's decision to migrate the library's tables with Flyway in their own history, and its
 * outcome. Created before the engine. Not API.
 */
public final class LibrarySchemaMigration {
  private static final Logger log = LoggerFactory.getLogger(LibrarySchemaMigration.class);
  private static final String DEFAULT_TABLE = "local_message";
  private static final String DEFAULT_INBOX_TABLE = "local_inbox";

  private final boolean migrated;

  private LibrarySchemaMigration(boolean migrated) {
    this.migrated = migrated;
  }

  /** Whether the starter's Flyway run migrated (or found up to date) the library's tables. */
  public boolean migrated() {
    return migrated;
  }

  /** Decides, and runs Flyway when it should. */
  public static LibrarySchemaMigration run(
      DataSource dataSource, LocalMessageProperties properties, Environment environment) {
    String skip = skipReason(properties, environment);
    if (skip != null) {
      log.debug("event=schema_flyway_skipped reason={}", skip);
      return new LibrarySchemaMigration(false);
    }
    LibraryFlyway.migrate(
        dataSource, properties.getSchema().getFlyway().getTable(), properties.getTable());
    return new LibrarySchemaMigration(true);
  }

  /** Why the starter leaves the schema to something else, or null when it migrates it. */
  static String skipReason(LocalMessageProperties properties, Environment environment) {
    Boolean enabled = properties.getSchema().getFlyway().getEnabled();
    if (Boolean.FALSE.equals(enabled)) {
      return "localmessage.schema.flyway.enabled=false";
    }
    List<String> appLocations =
        Binder.get(environment)
            .bind("spring.flyway.locations", Bindable.listOf(String.class))
            .orElse(List.of());
    boolean appRunsScripts = appLocations.stream().anyMatch(l -> l.contains("db/localmessage"));
    boolean customNames =
        !DEFAULT_TABLE.equalsIgnoreCase(properties.getTable())
            || !DEFAULT_INBOX_TABLE.equalsIgnoreCase(properties.getInboxTable());
    if (Boolean.TRUE.equals(enabled)) {
      if (appRunsScripts) {
        throw new StartupCheckException(
            "localmessage.schema.flyway.enabled=true, and spring.flyway.locations "
                + appLocations
                + " also runs the library's scripts: two histories would apply the same steps",
            "Remove the db/localmessage location from spring.flyway.locations (the starter's"
                + " run keeps its own history), or set localmessage.schema.flyway.enabled=false.");
      }
      if (customNames) {
        throw new StartupCheckException(
            "localmessage.schema.flyway.enabled=true, but the shipped scripts create the default"
                + " tables local_message* and local_inbox, not "
                + properties.getTable()
                + "* and "
                + properties.getInboxTable(),
            "Use localmessage.schema.initialize=true (it creates the configured names), or"
                + " write your own migrations (LocalMessages.schemaDdl() prints them with your"
                + " names) and set localmessage.schema.flyway.enabled=false.");
      }
      return null;
    }
    if (properties.getSchema().isInitialize()) {
      return "localmessage.schema.initialize=true";
    }
    if (appRunsScripts) {
      log.info(
          "event=schema_flyway_skipped reason=\"spring.flyway.locations includes db/localmessage:"
              + " the application's Flyway runs the library's scripts in its own history\"");
      return "the application's Flyway runs the scripts";
    }
    if (customNames) {
      return "custom table names";
    }
    return null;
  }
}
