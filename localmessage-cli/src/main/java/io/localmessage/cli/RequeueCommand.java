package io.localmessage.cli;

import io.localmessage.LocalMessages;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(
    name = "requeue",
    description = "Put DEAD messages back to PENDING (attempts reset), audited.")
final class RequeueCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @Parameters(arity = "0..*", description = "Message ids.")
  List<Long> ids;

  @Option(names = "--type", description = "Requeue every DEAD message of this biz type instead.")
  String type;

  @Option(names = "--reason", required = true, description = "Why (recorded in the audit trail).")
  String reason;

  @Override
  public Integer call() {
    boolean byIds = ids != null && !ids.isEmpty();
    if (byIds == (type != null)) {
      throw new IllegalArgumentException("give either message ids or --type, not both or neither");
    }
    try (LocalMessages lm = root.open()) {
      int moved =
          byIds
              ? lm.admin().requeueDead(ids, root.operator, reason)
              : lm.admin().requeueAllDead(type, root.operator, reason);
      root.output().message("requeued " + moved, Map.of("requeued", moved));
      return moved == 0 ? ExitCodes.NOTHING_MATCHED : ExitCodes.OK;
    }
  }
}
