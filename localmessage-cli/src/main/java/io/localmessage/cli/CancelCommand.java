package io.localmessage.cli;

import io.localmessage.LocalMessages;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(
    name = "cancel",
    description = "Cancel PENDING or DEAD tickets: no more tries, nothing undone.")
final class CancelCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @Parameters(arity = "1..*", description = "Ticket ids.")
  List<Long> ids;

  @Option(names = "--reason", required = true, description = "Why (recorded in the audit trail).")
  String reason;

  @Override
  public Integer call() {
    try (LocalMessages lm = root.open()) {
      List<Long> canceled = new ArrayList<>();
      List<Long> skipped = new ArrayList<>();
      for (Long id : ids) {
        (lm.admin().cancel(id, root.operator, reason) ? canceled : skipped).add(id);
      }
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("canceled", canceled);
      json.put("skipped", skipped);
      root.output()
          .message(
              "canceled "
                  + canceled
                  + (skipped.isEmpty() ? "" : "; not found or not PENDING/DEAD: " + skipped),
              json);
      return skipped.isEmpty() ? ExitCodes.OK : ExitCodes.NOTHING_MATCHED;
    }
  }
}
