package io.localmessage.cli;

import io.localmessage.LocalMessages;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "resume", description = "Let every replica claim a paused biz type again.")
final class ResumeCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @Parameters(index = "0", description = "Biz type.")
  String type;

  @Option(names = "--reason", defaultValue = "resumed with localmessage-cli", description = "Why.")
  String reason;

  @Override
  public Integer call() {
    try (LocalMessages lm = root.open()) {
      lm.admin().resume(type, root.operator, reason);
      root.output().message("resumed " + type, Map.of("resumed", type));
      return ExitCodes.OK;
    }
  }
}
