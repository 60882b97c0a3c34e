package io.localmessage.cli;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

@Command(
    name = "purge",
    description = "Delete old terminal messages (or inbox rows) in bounded batches.")
final class PurgeCommand implements Callable<Integer> {
  @ParentCommand RootCommand root;

  @Option(
      names = "--older-than",
      required = true,
      converter = Durations.class,
      description = "Age: 30d, 12h, 15m, 90s or ISO-8601.")
  Duration olderThan;

  @Option(
      names = "--status",
      split = ",",
      description =
          "Statuses to purge: SUCCEEDED, CANCELED, DEAD (default: SUCCEEDED,CANCELED;"
              + " dead letters only when named; a DEAD message that a later message of its"
              + " aggregate waits behind is kept: cancel or requeue it).")
  Set<MessageStatus> statuses;

  @Option(names = "--inbox", description = "Purge inbox rows instead (ends their dedup window).")
  boolean inbox;

  @Override
  public Integer call() {
    try (LocalMessages lm = root.open()) {
      Map<String, Object> deleted = new LinkedHashMap<>();
      if (inbox) {
        deleted.put("inbox", lm.admin().purgeInbox(olderThan));
      } else {
        Set<MessageStatus> which =
            statuses == null || statuses.isEmpty()
                ? EnumSet.of(MessageStatus.SUCCEEDED, MessageStatus.CANCELED)
                : statuses;
        if (which.contains(MessageStatus.PENDING)) {
          throw new IllegalArgumentException("PENDING messages are never purged");
        }
        for (MessageStatus s : which) {
          deleted.put(s.name(), lm.admin().purge(s, olderThan));
        }
      }
      root.output().message("deleted " + deleted, deleted);
      return ExitCodes.OK;
    }
  }
}
