package io.localmessage.cli;

import io.localmessage.LocalMessages;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

@Command(name = "stats", description = "Backlog per biz type: pending, due, in flight, dead, ages.")
final class StatsCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @Override
  public Integer call() {
    try (LocalMessages lm = root.open()) {
      root.output().stats(lm.admin().stats());
      return ExitCodes.OK;
    }
  }
}
