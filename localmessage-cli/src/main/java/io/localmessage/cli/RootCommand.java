package io.localmessage.cli;

import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.StoreException;
import java.io.PrintWriter;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The {@code localmessage} command: connection options shared by every subcommand. */
@Command(
    name = "localmessage",
    mixinStandardHelpOptions = true,
    version = "localmessage-cli 0.1.0",
    description =
        "Operate a localmessage message table: backlog, dead letters, requeue, cancel, pause.",
    footer = {
      "",
      "The password is read from LOCALMESSAGE_PASSWORD, or asked for with --password (no value).",
      "Exit codes: 0 ok, 1 nothing matched, 2 bad arguments, 3 database error."
    },
    subcommands = {
      StatsCommand.class,
      DeadCommand.class,
      ShowCommand.class,
      FindCommand.class,
      RequeueCommand.class,
      CancelCommand.class,
      PauseCommand.class,
      ResumeCommand.class,
      PurgeCommand.class,
      SchemaCommand.class
    })
final class RootCommand {
  @Spec CommandSpec spec;

  @Option(
      names = "--jdbc-url",
      defaultValue = "${env:LOCALMESSAGE_JDBC_URL}",
      description = "JDBC URL of the database (or LOCALMESSAGE_JDBC_URL).")
  String jdbcUrl;

  @Option(
      names = "--user",
      defaultValue = "${env:LOCALMESSAGE_USER}",
      description = "Database user (or LOCALMESSAGE_USER).")
  String user;

  @Option(
      names = "--password",
      arity = "0",
      interactive = true,
      description = "Ask for the database password (it is never taken from the command line).")
  char[] password;

  @Option(
      names = "--table",
      defaultValue = LocalMessagesBuilder.DEFAULT_TABLE,
      description = "Message table (default: ${DEFAULT-VALUE}).")
  String table;

  @Option(
      names = "--inbox-table",
      defaultValue = LocalMessagesBuilder.DEFAULT_INBOX_TABLE,
      description = "Inbox table (default: ${DEFAULT-VALUE}).")
  String inboxTable;

  @Option(names = "--json", description = "Print JSON instead of a table.")
  boolean json;

  @Option(
      names = "--operator",
      defaultValue = "${env:USER:-cli}",
      description = "Name recorded in the audit trail (default: $USER).")
  String operator;

  PrintWriter out() {
    return spec.commandLine().getOut();
  }

  Output output() {
    return new Output(out(), json);
  }

  /** An engine used only for its admin API: no worker is started. */
  LocalMessages open() {
    if (jdbcUrl == null || jdbcUrl.isBlank()) {
      throw new IllegalArgumentException("--jdbc-url (or LOCALMESSAGE_JDBC_URL) is required");
    }
    String pw = password != null ? new String(password) : System.getenv("LOCALMESSAGE_PASSWORD");
    DataSource ds = new DriverDataSource(jdbcUrl, user, pw);
    try {
      return LocalMessages.builder(ds).table(table).inboxTable(inboxTable).build();
    } catch (StoreException e) {
      throw e;
    }
  }
}
