package io.localmessage.faults.mutants;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectUniqueId;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

import io.localmessage.testing.Intercepting;
import io.localmessage.testing.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/**
 * Generated SQL mutants (issue 50): for each target statement and each of its mutation points
 * ({@link SqlMutations}), the statement is rewritten where it runs (a wrapping data source on every
 * pool of the test kit, {@code TestDatabase.poolWrapper}) and the conformance suite's tests that
 * executed the statement unmutated run again, one at a time until one fails: killed, or survived.
 * Results go to {@code localmessage-faults/results/sql-mutants.md} as each mutant finishes, and a
 * run resumes after the mutants already there, so a long run can be done in parts.
 *
 * <p>Off by default (it runs the suite once per mutant): {@code -Dlm.mutants=true}, with {@code
 * -Dlm.mutants.seconds=N} the time after which no new mutant starts (default 600).
 */
class SqlMutantsTest {
  /** A statement to mutate: its name and how to recognize its text. */
  record Target(String name, Predicate<String> matches) {}

  /**
   * PostgreSQL's claim (its one-type shape: no UNION of several types, no id list, no aggregate
   * head) and write-back (outcome update, success delete).
   */
  static final List<Target> TARGETS =
      List.of(
          new Target(
              "claim",
              sql ->
                  sql.startsWith("WITH due AS (SELECT id, prev_owner")
                      && !sql.contains(" UNION ALL ")
                      && !sql.contains("= ANY(?)")
                      && !sql.contains("NOT EXISTS")),
          new Target(
              "write-back update",
              sql -> sql.startsWith("UPDATE ") && sql.contains(" t SET status = c.st")),
          new Target(
              "write-back delete",
              sql -> sql.startsWith("DELETE FROM ") && sql.contains(" t USING unnest(")));

  static final String SUITE = "io.localmessage.PostgresEngineTest";
  static final Path RESULTS = Path.of("results", "sql-mutants.md");

  // the mutant in force: a target and a mutation point; none during the baseline
  private static volatile Target activeTarget;
  private static volatile int activeIndex;
  private static final AtomicInteger applied = new AtomicInteger();
  // during the baseline: which targets the running test executed, and one text of each
  private static final Set<String> executed = ConcurrentHashMap.newKeySet();
  private static final Map<String, String> samples = new ConcurrentHashMap<>();

  @Test
  void generatedSqlMutantsOfTheClaimAndTheWriteBackOnPostgreSql() throws IOException {
    Assumptions.assumeTrue(
        Boolean.getBoolean("lm.mutants"), "the SQL mutant run is off (-Dlm.mutants=true)");
    long deadline =
        System.nanoTime() + Duration.ofSeconds(Long.getLong("lm.mutants.seconds", 600)).toNanos();
    TestDatabase.poolWrapper = ds -> Intercepting.dataSource(ds, SqlMutantsTest::rewrite);
    try {
      Launcher launcher = LauncherFactory.create();
      List<String> units = units(launcher);
      // the baseline: every test green unmutated, and which statements each one runs
      Map<String, Set<String>> exercises = new LinkedHashMap<>();
      for (String unit : units) {
        executed.clear();
        assertThat(failure(launcher, unit)).as("baseline of " + unit).isNull();
        exercises.put(unit, Set.copyOf(executed));
      }
      Results results = Results.read(RESULTS);
      for (Target target : TARGETS) {
        String sample = samples.get(target.name());
        assertThat(sample).as("the suite runs the " + target.name()).isNotNull();
        List<SqlMutations.Mutation> mutations = SqlMutations.of(sample);
        List<String> relevant =
            units.stream().filter(u -> exercises.get(u).contains(target.name())).toList();
        for (int k = 0; k < mutations.size(); k++) {
          String key = target.name() + " #" + k;
          if (results.done(key)) {
            continue;
          }
          if (System.nanoTime() - deadline >= 0) {
            results.write(RESULTS, "stopped at the time limit; run again to go on");
            return;
          }
          activeTarget = target;
          activeIndex = k;
          applied.set(0);
          String killedBy = null;
          for (String unit : relevant) {
            String failed = failure(launcher, unit);
            if (failed != null) {
              killedBy = failed;
              break;
            }
          }
          activeTarget = null;
          String outcome =
              killedBy != null ? "killed" : applied.get() == 0 ? "not run" : "survived";
          results.add(
              key, target.name(), mutations.get(k).description(), outcome, killedBy, RESULTS);
        }
      }
      results.write(RESULTS, "complete");
    } finally {
      activeTarget = null;
      TestDatabase.poolWrapper = java.util.function.UnaryOperator.identity();
    }
  }

  /** Applies the mutant in force to a statement of its target; records the baseline's targets. */
  private static Object rewrite(java.sql.Connection real, java.lang.reflect.Method m, Object[] a) {
    if ((m.getName().equals("prepareStatement") || m.getName().equals("prepareCall"))
        && a != null
        && a.length > 0
        && a[0] instanceof String sql) {
      Target active = activeTarget;
      if (active == null) {
        for (Target t : TARGETS) {
          if (t.matches().test(sql)) {
            executed.add(t.name());
            samples.putIfAbsent(t.name(), sql);
          }
        }
      } else if (active.matches().test(sql)) {
        List<SqlMutations.Mutation> ms = SqlMutations.of(sql);
        if (activeIndex < ms.size()) {
          a[0] = ms.get(activeIndex).sql();
          applied.incrementAndGet();
        }
      }
    }
    return Intercepting.PROCEED;
  }

  /** The suite's tests (methods and templates), by unique id. */
  private static List<String> units(Launcher launcher) {
    TestPlan plan = launcher.discover(request().selectors(selectClass(SUITE)).build());
    List<String> out = new ArrayList<>();
    for (TestIdentifier root : plan.getRoots()) {
      for (TestIdentifier d : plan.getDescendants(root)) {
        boolean method = d.getSource().filter(MethodSource.class::isInstance).isPresent();
        boolean underMethod =
            d.getParentIdObject()
                .map(plan::getTestIdentifier)
                .flatMap(TestIdentifier::getSource)
                .filter(MethodSource.class::isInstance)
                .isPresent();
        if (method && !underMethod) {
          out.add(d.getUniqueId());
        }
      }
    }
    return out;
  }

  /** Runs one test; its display name when it failed, else null. */
  private static String failure(Launcher launcher, String unit) {
    SummaryGeneratingListener listener = new SummaryGeneratingListener();
    launcher.execute(request().selectors(selectUniqueId(unit)).build(), listener);
    var summary = listener.getSummary();
    if (summary.getTotalFailureCount() == 0) {
      return null;
    }
    return summary.getFailures().get(0).getTestIdentifier().getDisplayName();
  }

  /** The results file: one row per mutant, kept in the order written. */
  static final class Results {
    private final Map<String, String> rows = new LinkedHashMap<>();

    static Results read(Path file) throws IOException {
      Results r = new Results();
      if (Files.exists(file)) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          String[] cells = line.split("\\|");
          if (cells.length > 2 && cells[1].trim().contains(" #")) {
            r.rows.put(cells[1].trim(), line);
          }
        }
      }
      return r;
    }

    boolean done(String key) {
      return rows.containsKey(key);
    }

    void add(String key, String target, String mutation, String outcome, String killedBy, Path file)
        throws IOException {
      rows.put(
          key,
          "| "
              + key
              + " | "
              + mutation.replace("|", "\\|")
              + " | "
              + outcome
              + " | "
              + (killedBy == null ? "" : killedBy.replace("|", "\\|"))
              + " |");
      write(file, "in progress");
    }

    void write(Path file, String state) throws IOException {
      Map<String, int[]> totals = new LinkedHashMap<>();
      for (Map.Entry<String, String> row : rows.entrySet()) {
        String target = row.getKey().substring(0, row.getKey().indexOf(" #"));
        int[] t = totals.computeIfAbsent(target, k -> new int[3]);
        t[0]++;
        if (row.getValue().contains("| killed |")) {
          t[1]++;
        } else if (row.getValue().contains("| survived |")) {
          t[2]++;
        }
      }
      StringBuilder md = new StringBuilder();
      md.append("# Generated SQL mutants (PostgreSQL)\n\n")
          .append("Written by `SqlMutantsTest` (`localmessage-faults`, `-Dlm.mutants=true`): each")
          .append(" mutation point of a statement (a conjunct dropped, a comparison flipped, a")
          .append(
              " locking clause, an assignment or an ORDER BY dropped, a LIMIT raised) rewritten")
          .append(" where it runs, and the tests of `PostgresEngineTest` that ran the statement")
          .append(" run again until one fails. Run: ")
          .append(state)
          .append(
              ".\n\n| statement | mutants | killed | survived | not run |\n| --- | ---: | ---: |")
          .append(" ---: | ---: |\n");
      totals.forEach(
          (target, t) ->
              md.append("| ")
                  .append(target)
                  .append(" | ")
                  .append(t[0])
                  .append(" | ")
                  .append(t[1])
                  .append(" | ")
                  .append(t[2])
                  .append(" | ")
                  .append(t[0] - t[1] - t[2])
                  .append(" |\n"));
      md.append("\n| mutant | mutation | outcome | killed by |\n| --- | --- | --- | --- |\n");
      rows.values().forEach(line -> md.append(line).append('\n'));
      Files.createDirectories(file.getParent());
      Files.writeString(file, md.toString(), StandardCharsets.UTF_8);
    }
  }
}
