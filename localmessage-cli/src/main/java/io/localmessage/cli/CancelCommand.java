package io.localmessage.cli;

import io.localmessage.LocalMessages;
import io.localmessage.MessageInFlightException;
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
    description = {
      "Cancel PENDING or DEAD messages: no more tries, nothing undone.",
      "A message being delivered right now is refused (exit code 4): pause its type or wait for"
          + " the outcome, then cancel."
    })
final class CancelCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @Parameters(arity = "1..*", description = "Message ids.")
  List<Long> ids;

  @Option(names = "--reason", required = true, description = "Why (recorded in the audit trail).")
  String reason;

  @Override
  public Integer call() {
    try (LocalMessages lm = root.open()) {
      List<Long> canceled = new ArrayList<>();
      List<Long> skipped = new ArrayList<>();
      List<Map<String, Object>> refused = new ArrayList<>();
      StringBuilder text = new StringBuilder();
      for (Long id : ids) {
        try {
          (lm.admin().cancel(id, root.operator, reason) ? canceled : skipped).add(id);
        } catch (MessageInFlightException e) {
          Map<String, Object> r = new LinkedHashMap<>();
          r.put("id", id);
          r.put("reason", e.getMessage());
          refused.add(r);
          text.append(System.lineSeparator()).append("refused: ").append(e.getMessage());
        }
      }
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("canceled", canceled);
      json.put("skipped", skipped);
      json.put("refused", refused);
      root.output()
          .message(
              "canceled "
                  + canceled
                  + (skipped.isEmpty() ? "" : "; not found or not PENDING/DEAD: " + skipped)
                  + text,
              json);
      if (!refused.isEmpty()) {
        return ExitCodes.IN_FLIGHT;
      }
      return skipped.isEmpty() ? ExitCodes.OK : ExitCodes.NOTHING_MATCHED;
    }
  }
}
