package io.localmessage.cli;

import io.localmessage.LocalMessages;
import io.localmessage.Printable;
import io.localmessage.admin.MessageView;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "show", description = "One message with its audit trail.")
final class ShowCommand implements Callable<Integer> {
  static final int PAYLOAD_PREVIEW_BYTES = 4096;

  @ParentCommand RootCommand root;

  @Parameters(index = "0", description = "Message id.")
  long id;

  @Option(
      names = "--payload",
      description = "Also print the payload (first 4 KiB; base64 if not UTF-8).")
  boolean payload;

  @Override
  public Integer call() {
    try (LocalMessages lm = root.open()) {
      Optional<MessageView> t = lm.admin().get(id);
      if (t.isEmpty()) {
        root.spec.commandLine().getErr().println("no message with id " + id);
        return ExitCodes.NOTHING_MATCHED;
      }
      root.output().message(t.get(), lm.admin().audit(id));
      if (payload) {
        byte[] p = lm.admin().payload(id).orElse(new byte[0]);
        root.out().println("payload:");
        root.out().println(terminalSafe(preview(p)));
      }
      return ExitCodes.OK;
    }
  }

  /** The payload's lines as they are; every other control character escaped. */
  static String terminalSafe(String text) {
    String[] lines = text.split("\n", -1);
    StringBuilder sb = new StringBuilder(text.length());
    for (int i = 0; i < lines.length; i++) {
      if (i > 0) {
        sb.append('\n');
      }
      sb.append(Printable.escape(lines[i]));
    }
    return sb.toString();
  }

  static String preview(byte[] p) {
    int n = Math.min(p.length, PAYLOAD_PREVIEW_BYTES);
    byte[] head = java.util.Arrays.copyOf(p, n);
    String suffix = p.length > n ? "... (" + p.length + " bytes)" : "";
    try {
      return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(head)) + suffix;
    } catch (CharacterCodingException e) {
      return "base64:" + Base64.getEncoder().encodeToString(head) + suffix;
    }
  }
}
