package io.localmessage.cli;

import io.localmessage.LocalMessageException;
import java.io.PrintWriter;
import picocli.CommandLine;

/** Entry point of the {@code localmessage} ops command line. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }

  /** Runs one command line; returns the exit code (see {@link ExitCodes}). */
  public static int run(String[] args, PrintWriter out, PrintWriter err) {
    CommandLine cl = new CommandLine(new RootCommand());
    cl.setOut(out);
    cl.setErr(err);
    cl.setExecutionExceptionHandler(
        (ex, line, parsed) -> {
          if (ex instanceof IllegalArgumentException) {
            line.getErr().println("error: " + ex.getMessage());
            return ExitCodes.USAGE;
          }
          if (ex instanceof LocalMessageException) {
            Throwable cause = ex.getCause();
            line.getErr()
                .println(
                    "error: "
                        + ex.getMessage()
                        + (cause == null ? "" : " (" + cause.getMessage() + ")"));
            return ExitCodes.DATABASE;
          }
          throw ex;
        });
    return cl.execute(args);
  }
}
