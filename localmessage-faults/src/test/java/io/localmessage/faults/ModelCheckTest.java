package io.localmessage.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Checks the model of the ticket lifecycle ({@code model/lifecycle.pml} at the repository root)
 * exhaustively with SPIN: the fixed design must satisfy every safety assertion and, under weak
 * fairness, the liveness property; the design before the fix and every known way to break the
 * design must produce a counterexample, so this check can fail. A failure prints the trail as the
 * model's event lines ({@code spin -t}).
 */
@Execution(ExecutionMode.CONCURRENT) // two checks at a time: each is CPU-bound and has its own dir
class ModelCheckTest {
  private static final Path MODEL = Path.of("..", "model", "lifecycle.pml").toAbsolutePath();
  private static final Path WORK = Path.of("target", "model-check").toAbsolutePath();
  // generous for a loaded CI machine: no step takes more than 15 s of CPU
  private static final long STEP_TIMEOUT_SECONDS = 300;

  @BeforeAll
  static void toolsPresent() throws Exception {
    assertThat(MODEL).as("the model file").exists();
    for (String tool : List.of("spin", "gcc")) {
      Run r;
      try {
        r = exec(WORK, 20, tool, tool.equals("spin") ? "-V" : "--version");
      } catch (IOException e) {
        r = null;
      }
      if (r == null || r.exit != 0) {
        fail(
            tool
                + " is not installed: run ./run-tests at the repository root once, which installs"
                + " it (the model check needs spin and gcc)");
      }
    }
  }

  /** Every safety property of the fixed design, with every actor (operator and faults) on. */
  @Test
  void fixedDesignIsSafe() throws Exception {
    Result r = check("fixed-safety", List.of(), Mode.SAFETY);
    assertThat(r.errors).as(r.describe()).isZero();
    assertThat(r.complete()).as(r.describe()).isTrue();
  }

  /**
   * Liveness under weak fairness: every ticket ends terminal (or waits behind a DEAD head for an
   * operator). Run in two configurations, faults and operator actions, to stay within the time the
   * build allows; {@code model/README.md} gives the command for all of them at once.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("livenessConfigurations")
  void fixedDesignTerminates(String name, List<String> defines) throws Exception {
    Result r = check(name, defines, Mode.LIVENESS);
    assertThat(r.errors).as(r.describe()).isZero();
    assertThat(r.complete()).as(r.describe()).isTrue();
  }

  static Stream<Arguments> livenessConfigurations() {
    return Stream.of(
        Arguments.of("fixed-liveness-faults", List.of("-DCANCELS=0", "-DREQUEUES=0", "-DPAUSES=0")),
        Arguments.of("fixed-liveness-operator", List.of("-DFREEZES=0", "-DEXITS=0")));
  }

  /** The design before the fix and each mutant must fail, for the reason it is known to fail. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("brokenDesigns")
  void brokenDesignIsCaught(String name, List<String> defines, String expected) throws Exception {
    Result r = check(name, defines, Mode.COUNTEREXAMPLE);
    assertThat(r.errors)
        .as("%s must produce a counterexample%n%s", name, r.describe())
        .isPositive();
    assertThat(r.trail).as(r.describe()).anyMatch(l -> l.contains(expected));
  }

  static Stream<Arguments> brokenDesigns() {
    String overlap = "VIOLATED: two executions of one ticket";
    String order = "VIOLATED: ticket 1 runs before its predecessor";
    return Stream.of(
        // today's design: cancel of an in-flight head, then (with cancel off) the shutdown
        // release, then (with shutdown off too) the timeout write-back
        Arguments.of("today", List.of("-DTODAY"), order),
        Arguments.of("today-shutdown", List.of("-DTODAY", "-DCANCELS=0"), overlap),
        Arguments.of("today-timeout", List.of("-DTODAY", "-DCANCELS=0", "-DEXITS=0"), overlap),
        Arguments.of("a-timeout-at-once", List.of("-DMUTANT_TIMEOUT_AT_ONCE"), "VIOLATED"),
        Arguments.of(
            "b-no-version-check",
            List.of("-DMUTANT_NO_VERSION_CHECK"),
            "VIOLATED: a stale write-back changed the row"),
        Arguments.of("c-sweep-ignores-lease", List.of("-DMUTANT_SWEEP_IGNORES_LEASE"), "VIOLATED"),
        Arguments.of("d-cancel-in-flight", List.of("-DMUTANT_CANCEL_IN_FLIGHT"), order),
        Arguments.of(
            "e-shutdown-releases-running", List.of("-DMUTANT_SHUTDOWN_RELEASES_RUNNING"), overlap));
  }

  // ---------------------------------------------------------------- running spin

  private enum Mode {
    /** assertions and the safety monitor, depth-first, the LTL claim left out */
    SAFETY,
    /** the LTL claim {@code terminates}, acceptance cycles under weak fairness */
    LIVENESS,
    /** like SAFETY, breadth-first so the counterexample is a shortest one */
    COUNTEREXAMPLE
  }

  private static Result check(String name, List<String> defines, Mode mode) throws Exception {
    Path dir = WORK.resolve(name);
    Files.createDirectories(dir);
    try (Stream<Path> old = Files.list(dir)) {
      for (Path p : (Iterable<Path>) old::iterator) {
        Files.delete(p);
      }
    }
    Files.copy(MODEL, dir.resolve("lifecycle.pml"), StandardCopyOption.REPLACE_EXISTING);
    long t0 = System.nanoTime();

    List<String> spin = new ArrayList<>(List.of("spin"));
    spin.addAll(defines);
    spin.addAll(List.of("-a", "lifecycle.pml"));
    requireOk(exec(dir, STEP_TIMEOUT_SECONDS, spin));

    List<String> gcc = new ArrayList<>(List.of("gcc", "-DMEMLIM=1536", "-o", "pan"));
    switch (mode) {
      case SAFETY -> gcc.addAll(List.of("-O2", "-DSAFETY", "-DNOCLAIM"));
      // a counterexample is found within a small part of the state space: compiling without
      // optimization saves more time than the search loses
      case COUNTEREXAMPLE -> gcc.addAll(List.of("-O0", "-DSAFETY", "-DNOCLAIM", "-DBFS"));
      // weak fairness over the 6 processes that run forever
      case LIVENESS -> gcc.addAll(List.of("-O2", "-DNFAIR=3"));
    }
    gcc.add("pan.c");
    requireOk(exec(dir, STEP_TIMEOUT_SECONDS, gcc));

    List<String> pan = new ArrayList<>(List.of("./pan", "-m100000"));
    if (mode == Mode.LIVENESS) {
      pan.addAll(List.of("-a", "-f", "-N", "terminates"));
    }
    Run run = exec(dir, STEP_TIMEOUT_SECONDS, pan);
    Result r = Result.parse(name, mode, run.output);
    r.seconds = (System.nanoTime() - t0) / 1e9;

    if (r.errors > 0 && Files.exists(dir.resolve("lifecycle.pml.trail"))) {
      List<String> replay = new ArrayList<>(List.of("spin", "-T", "-t"));
      replay.addAll(defines);
      replay.add("lifecycle.pml");
      Run t = exec(dir, STEP_TIMEOUT_SECONDS, replay);
      r.trail =
          t.output
              .lines()
              .filter(
                  l ->
                      l.startsWith("@")
                          || l.contains("Error")
                          || l.contains("CYCLE")
                          || l.contains("trail ends"))
              .limit(80)
              .collect(Collectors.toList());
    }
    System.out.println(r.describe());
    return r;
  }

  private static void requireOk(Run r) {
    if (r.exit != 0) {
      fail(r.command + " failed (exit " + r.exit + "):\n" + tail(r.output, 40));
    }
  }

  private static String tail(String s, int lines) {
    List<String> all = s.lines().collect(Collectors.toList());
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  private record Run(String command, int exit, String output) {}

  private static Run exec(Path dir, long timeoutSeconds, String... command) throws Exception {
    return exec(dir, timeoutSeconds, List.of(command));
  }

  private static Run exec(Path dir, long timeoutSeconds, List<String> command) throws Exception {
    Files.createDirectories(dir);
    Path out = Files.createTempFile(dir, "out", ".txt");
    Process p =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      fail(String.join(" ", command) + " did not finish within " + timeoutSeconds + " s");
    }
    String output = Files.readString(out, StandardCharsets.UTF_8);
    Files.delete(out);
    return new Run(String.join(" ", command), p.exitValue(), output);
  }

  /** What pan reported. */
  private static final class Result {
    final String name;
    final Mode mode;
    final String output;
    long errors = -1;
    long stored;
    long transitions;
    long depth;
    double seconds;
    List<String> trail = List.of();

    private Result(String name, Mode mode, String output) {
      this.name = name;
      this.mode = mode;
      this.output = output;
    }

    static Result parse(String name, Mode mode, String output) {
      Result r = new Result(name, mode, output);
      r.errors = find(output, "errors: (\\d+)", -1);
      r.depth = find(output, "depth reached (\\d+)", 0);
      r.stored = find(output, "(\\d+) states, stored", 0);
      r.transitions = (long) findDouble(output, "([0-9.e+]+) transitions", 0);
      return r;
    }

    /** The search covered the whole state space: no bound cut it short. */
    boolean complete() {
      return errors >= 0
          && !output.contains("max search depth too small")
          && !output.contains("out of memory")
          && !output.contains("MEMLIM");
    }

    String describe() {
      StringBuilder b =
          new StringBuilder(
              String.format(
                  "model check %s (%s): errors=%d states stored=%d transitions=%d depth=%d"
                      + " time=%.1fs",
                  name, mode, errors, stored, transitions, depth, seconds));
      if (!trail.isEmpty()) {
        b.append("\n  trail (spin -t, model events):");
        trail.forEach(l -> b.append("\n    ").append(l));
      }
      if (errors < 0 || !complete()) {
        b.append("\n  pan output:\n").append(tail(output, 30));
      }
      return b.toString();
    }

    private static long find(String s, String regex, long otherwise) {
      Matcher m = Pattern.compile(regex).matcher(s);
      return m.find() ? Long.parseLong(m.group(1)) : otherwise;
    }

    private static double findDouble(String s, String regex, double otherwise) {
      Matcher m = Pattern.compile(regex).matcher(s);
      return m.find() ? Double.parseDouble(m.group(1)) : otherwise;
    }
  }
}
