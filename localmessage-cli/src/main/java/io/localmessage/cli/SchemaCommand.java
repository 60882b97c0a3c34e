package io.localmessage.cli;

import io.localmessage.Schema;
import io.localmessage.spi.Dialects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

@Command(name = "schema", description = "Print the DDL for a database (no connection needed).")
final class SchemaCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @Option(names = "--dialect", required = true, description = "postgresql, mysql, mariadb or h2.")
  String dialect;

  @Override
  public Integer call() {
    root.out().print(Schema.ddl(Dialects.named(dialect), root.table, root.inboxTable));
    root.out().flush();
    return ExitCodes.OK;
  }
}
