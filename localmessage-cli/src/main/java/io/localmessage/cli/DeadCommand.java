package io.localmessage.cli;

import io.localmessage.LocalMessages;
import io.localmessage.admin.MessageView;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

@Command(name = "dead", description = "Dead letters.", subcommands = DeadCommand.ListCommand.class)
final class DeadCommand {
  @ParentCommand RootCommand root;

  @Command(name = "list", description = "List DEAD messages, oldest first, page by --after.")
  static final class ListCommand implements Callable<Integer> {
    @ParentCommand DeadCommand dead;

    @Option(names = "--type", description = "Only this biz type.")
    String type;

    @Option(
        names = "--limit",
        defaultValue = "50",
        description = "At most this many (default: ${DEFAULT-VALUE}).")
    int limit;

    @Option(
        names = "--after",
        defaultValue = "0",
        description = "Only ids above this one (paging).")
    long after;

    @Override
    public Integer call() {
      try (LocalMessages lm = dead.root.open()) {
        List<MessageView> rows = lm.admin().listDead(type, after, limit);
        dead.root.output().messages(rows);
        return rows.isEmpty() ? ExitCodes.NOTHING_MATCHED : ExitCodes.OK;
      }
    }
  }
}
