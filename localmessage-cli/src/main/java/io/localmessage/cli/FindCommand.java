package io.localmessage.cli;

import io.localmessage.LocalMessages;
import io.localmessage.admin.MessageView;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

@Command(name = "find", description = "Messages by business key: aggregate id or idempotency key.")
final class FindCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @ArgGroup(exclusive = true, multiplicity = "1")
  Key key;

  static final class Key {
    @Option(
        names = "--aggregate",
        required = true,
        description = "Aggregate id (e.g. an order id).")
    String aggregate;

    @Option(names = "--key", required = true, description = "Idempotency key.")
    String idemKey;
  }

  @Option(
      names = "--limit",
      defaultValue = "100",
      description = "At most this many (default: ${DEFAULT-VALUE}).")
  int limit;

  @Override
  public Integer call() {
    try (LocalMessages lm = root.open()) {
      List<MessageView> rows =
          key.aggregate != null
              ? lm.admin().findByAggregate(key.aggregate, limit)
              : lm.admin().findByIdemKey(key.idemKey);
      root.output().messages(rows);
      return rows.isEmpty() ? ExitCodes.NOTHING_MATCHED : ExitCodes.OK;
    }
  }
}
