package io.localmessage.cli;

import io.localmessage.LocalMessages;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(
    name = "pause",
    description = "Stop claiming a biz type on every replica (within one poll interval).")
final class PauseCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @Parameters(index = "0", description = "Biz type.")
  String type;

  @Option(names = "--reason", defaultValue = "paused with localmessage-cli", description = "Why.")
  String reason;

  @Override
  public Integer call() {
    try (LocalMessages lm = root.open()) {
      lm.admin().pause(type, root.operator, reason);
      root.output().message("paused " + type, Map.of("paused", type));
      return ExitCodes.OK;
    }
  }
}
