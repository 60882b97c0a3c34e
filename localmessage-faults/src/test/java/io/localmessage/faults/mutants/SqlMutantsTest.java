package io.localmessage.faults.mutants;

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
 * Generated SQL mutants (issue 50): every statement the engine's conformance suites execute is
 * found by its shape (its text with the per-test table names and numbers masked), and for each of
 * its mutation points ({@link SqlMutations}) the statement is rewritten where it runs (a wrapping
 * data source on every pool of the test kit, {@code TestDatabase.poolWrapper}); the suites' tests
 * that executed the statement unmutated run again, the fastest first, until one fails: killed, or
 * survived. The claim's forms (one type, several types, by id, ordered) are one target ({@link
 * #target}): a mutation of a part they share is in force in all of them at once. Nothing lists the
 * statements: a statement the suites run is mutated. Results go to {@code
 * localmessage-faults/results/sql-mutants[-mariadb].md} as each mutant finishes, and a run resumes
 * after the mutants already there, so a long run can be done in parts; the baseline (which test
 * runs which statement, and how long it takes) is kept in {@code target/} between parts.
 *
 * <p>Off by default (it runs the suites once per mutant): {@code -Dlm.mutants=true}, with {@code
 * -Dlm.mutants.seconds=N} the time after which no new mutant starts (default 600), {@code
 * -Dlm.mutants.db=postgresql|mariadb} and {@code -Dlm.mutants.suites=EngineTest,...} (the suites'
 * names without their database's prefix); {@code -Dlm.mutants.rerunSurvivors=true} runs the
 * survivors of the table again (after a test was added).
 */
class SqlMutantsTest {
  /** The suites run against each mutant, without their database's prefix. */
  static final List<String> DEFAULT_SUITES =
      List.of(
          "EngineTest",
          "EngineBoundsTest",
          "OutcomeRulesTest",
          "OrderedSaveTest",
          "OperatorTest",
          "HardeningTest");

  /**
   * A mutant: the statements it applies to (by shape) and which of their mutation points, by number
   * or, when {@code description} is set, by what it does.
   */
  record Mutant(Predicate<String> shapes, int index, String description) {
    SqlMutations.Mutation pick(String sql) {
      List<SqlMutations.Mutation> ms = SqlMutations.of(sql);
      if (description == null) {
        return index < ms.size() ? ms.get(index) : null;
      }
      return ms.stream()
          .filter(m -> m.key().equals(description) || m.description().equals(description))
          .findFirst()
          .orElse(null);
    }
  }

  private static final String CONTROL_ROW =
      "only creates a type's control row ahead of the pause, which creates a missing row itself"
          + " (the early row spares InnoDB's gap locks; the outcome is the same)";

  private static final String MILLISECOND =
      "differs only for a row that changed in the cutoff's millisecond, which the next purge takes";

  /**
   * Survivors that change nothing the engine promises, by statement name (without its hash) and
   * mutation, with the reason (design 8.23). A survivor listed here is shown as equivalent.
   */
  static final Map<String, String> EQUIVALENT =
      Map.ofEntries(
          Map.entry(
              "DELETE FROM T WHERE (id) IN|`<` -> `<=` in `next_retry_at < (statement_timestamp()"
                  + " + ? * interval '1 millisecond')`",
              MILLISECOND),
          Map.entry(
              "DELETE FROM T WHERE (id) IN|`<` -> `<=` in `updated_at < (statement_timestamp() +"
                  + " ? * interval '1 millisecond')`",
              MILLISECOND),
          Map.entry(
              "DELETE FROM T_inbox WHERE (consumer, message_id)|`<` -> `<=` in `received_at <"
                  + " (statement_timestamp() + ? * interval '1 millisecond')`",
              MILLISECOND),
          Map.entry(
              "DELETE FROM T WHERE (id) IN|drop `next_retry_at < (statement_timestamp() + ? *"
                  + " interval '1 millisecond')`",
              "every terminal row's next_retry_at is at most its updated_at, so updated_at <"
                  + " cutoff implies it (it is there for the due index's range)"),
          Map.entry(
              "DELETE FROM T WHERE (id) IN|drop `updated_at < (statement_timestamp() + ? *"
                  + " interval '1 millisecond')`",
              "SUCCEEDED and CANCELED rows get next_retry_at and updated_at from one statement,"
                  + " so next_retry_at < cutoff decides alike (DEAD rows: killed by"
                  + " aDeadPurgeCountsAgeFromWhenTheMessageDiedNotFromItsLastLeaseEnd)"),
          Map.entry(
              "DELETE FROM T WHERE (id) IN|drop `h.biz_type = ?`",
              "the outer statement keeps to the type, and a head is a head by later messages of"
                  + " its own type"),
          Map.entry(
              "DELETE FROM T WHERE (id) IN|drop `h.status = 2`",
              "the outer statement keeps to DEAD rows, so only DEAD heads are ever left out"),
          Map.entry("SELECT N FROM T_control WHERE biz_type|drop `biz_type = ?`", CONTROL_ROW),
          Map.entry(
              "SELECT N FROM T_control WHERE biz_type|`=` -> `<>` in `biz_type = ?`", CONTROL_ROW),
          Map.entry(
              "SELECT biz_type, status, lease_owner, next_retry_at, CASE|`>` -> `>=` in"
                  + " `next_retry_at > statement_timestamp()`",
              "differs only for a lease ending in the statement's millisecond"),
          Map.entry(
              "SELECT id FROM T WHERE biz_type|drop `status = 2`",
              "requeueAllDead's own lock and update take only rows still DEAD (status = 2)"),
          Map.entry(
              "SELECT id FROM T WHERE biz_type|`<=` -> `<` in `updated_at <="
                  + " (statement_timestamp() + ? * interval '1 millisecond')`",
              "differs only for a message that died in the call's first millisecond"),
          Map.entry(
              "SELECT biz_type, status, COUNT(*), SUM(CASE WHEN|`<=` -> `<` in `next_retry_at <="
                  + " statement_timestamp()`",
              "a backlog count differs only for a message due in the statement's millisecond"),
          Map.entry(
              "SELECT biz_type, status, COUNT(*), SUM(CASE WHEN|`>` -> `>=` in `next_retry_at >"
                  + " statement_timestamp()`",
              "a leased count differs only for a lease ending in the statement's millisecond"),
          Map.entry(
              "SELECT COUNT(*) FROM T WHERE biz_type|drop `biz_type = ?`",
              "the heads it counts are of the type already (h.biz_type = ?)"),
          Map.entry(
              "SELECT COUNT(*) FROM T WHERE biz_type|drop `status = ?`",
              "the heads it counts are DEAD already (h.status = 2)"),
          Map.entry(
              "SELECT COUNT(*) FROM T WHERE biz_type|drop `h.biz_type = ?`",
              "the outer condition keeps to the type"),
          Map.entry(
              "write-back update|drop `t.status = 0`",
              "every status change also moves the version, so the version test implies it"),
          Map.entry(
              "write-back delete|drop `t.status = 0`",
              "every status change also moves the version, so the version test implies it"),
          Map.entry(
              "claim|`<=` -> `<` in `m.next_retry_at <= statement_timestamp()`",
              "differs only for a row due in the claim's millisecond; the next claim takes it"),
          Map.entry(
              "claim|drop `ORDER BY m.next_retry_at`",
              "the due index (biz_type, status, next_retry_at) the claim reads returns rows in"
                  + " that order anyway; aClaimTakesNoMoreThanTheFreeSlotsAndTheLongestDueFirst"
                  + " checks it"));

  /** The reason a survivor is equivalent, or null. */
  static String equivalence(String key, String mutation) {
    String statement = key.substring(0, key.lastIndexOf(" #"));
    if (statement.contains(" ~")) {
      statement = statement.substring(0, statement.lastIndexOf(" ~"));
    }
    return EQUIVALENT.get(statement + "|" + mutation);
  }

  /**
   * What a mutant changes: the claim's forms (one type, several, by id, ordered) are built by one
   * method from the same parts, so a mutation of a part is one mutant, in force in every form that
   * has it, as a bug in that part would be; every other statement is its own target.
   */
  static String target(String shape) {
    String name = Statements.name(shape);
    return name.startsWith("claim") ? "claim" : name;
  }

  // the mutant in force; none during the baseline
  private static volatile Mutant active;
  private static final AtomicInteger applied = new AtomicInteger();
  // why the last failing test failed (shown when the baseline fails)
  private static volatile Throwable lastFailure;
  // during the baseline: the shapes the running test executed, and one text of each
  private static final Set<String> executed = ConcurrentHashMap.newKeySet();
  private static final Map<String, String> seen = new ConcurrentHashMap<>();

  @Test
  void generatedSqlMutantsOfEveryStatementTheConformanceSuitesRun() throws IOException {
    Assumptions.assumeTrue(
        Boolean.getBoolean("lm.mutants"), "the SQL mutant run is off (-Dlm.mutants=true)");
    long deadline =
        System.nanoTime() + Duration.ofSeconds(Long.getLong("lm.mutants.seconds", 600)).toNanos();
    boolean maria = System.getProperty("lm.mutants.db", "postgresql").equalsIgnoreCase("mariadb");
    String prefix = maria ? "io.localmessage.MariaDb" : "io.localmessage.Postgres";
    String suitesProperty = System.getProperty("lm.mutants.suites", "");
    List<String> suites =
        (suitesProperty.isBlank()
                ? DEFAULT_SUITES
                : List.of(suitesProperty.trim().split("\\s*,\\s*")))
            .stream().map(n -> prefix + n).toList();
    Path resultsFile = Path.of("results", maria ? "sql-mutants-mariadb.md" : "sql-mutants.md");
    // after a test was added: survivors run again (the rows already killed stay)
    boolean rerunSurvivors = Boolean.getBoolean("lm.mutants.rerunSurvivors");
    Path baselineFile =
        Path.of("target", "sql-mutants-baseline-" + (maria ? "mariadb" : "postgresql") + ".txt");
    TestDatabase.poolWrapper = ds -> Intercepting.dataSource(ds, SqlMutantsTest::rewrite);
    try {
      Launcher launcher = LauncherFactory.create();
      Baseline kept = Baseline.read(baselineFile, suites);
      if (kept != null) {
        // kept only while the suites hold the same tests
        List<String> now = new ArrayList<>();
        suites.forEach(suite -> now.addAll(units(launcher, suite)));
        if (!now.equals(kept.units)) {
          kept = null;
        }
      }
      Baseline baseline = kept != null ? kept : Baseline.run(launcher, suites);
      if (baseline != kept) {
        baseline.write(baselineFile, suites);
      }
      Results results = Results.read(resultsFile, maria ? "MariaDB" : "PostgreSQL", suites);
      // the claim and the write-back first: the engine's guarantees live there
      Map<String, List<String>> targets =
          new java.util.TreeMap<>(
              java.util.Comparator.comparing(
                      (String t) -> t.startsWith("claim") || t.startsWith("write-back") ? 0 : 1)
                  .thenComparing(t -> t));
      baseline
          .samples
          .keySet()
          .forEach(
              shape -> targets.computeIfAbsent(target(shape), t -> new ArrayList<>()).add(shape));
      for (Map.Entry<String, List<String>> target : targets.entrySet()) {
        List<String> shapes = target.getValue();
        // each mutation once (by its key), in the order of the target's shapes
        Map<String, String> mutations = new LinkedHashMap<>();
        for (String shape : shapes) {
          SqlMutations.of(baseline.samples.get(shape))
              .forEach(m -> mutations.putIfAbsent(m.key(), m.description()));
        }
        List<String> relevant =
            baseline.units.stream()
                .filter(u -> baseline.exercises.get(u).stream().anyMatch(shapes::contains))
                .sorted(java.util.Comparator.comparingLong(u -> baseline.millis.get(u)))
                .toList();
        for (Map.Entry<String, String> m : mutations.entrySet()) {
          String key =
              target.getKey() + " #" + String.format("%06x", m.getKey().hashCode() & 0xffffff);
          if (results.done(key) && !(rerunSurvivors && results.survived(key))) {
            continue;
          }
          if (System.nanoTime() - deadline >= 0) {
            results.write(resultsFile, "stopped at the time limit; run again to go on");
            return;
          }
          active = new Mutant(shapes::contains, -1, m.getKey());
          applied.set(0);
          String killedBy = null;
          for (String unit : relevant) {
            String failed = failure(launcher, unit);
            if (failed != null) {
              killedBy = failed;
              break;
            }
          }
          active = null;
          String mutation = m.getValue();
          String outcome =
              killedBy != null
                  ? "killed"
                  : applied.get() == 0
                      ? "not run"
                      : equivalence(key, mutation) != null ? "equivalent" : "survived";
          if (outcome.equals("equivalent")) {
            killedBy = equivalence(key, mutation);
          }
          results.add(key, mutation, outcome, killedBy, resultsFile);
        }
      }
      results.write(resultsFile, "complete");
    } finally {
      active = null;
      TestDatabase.poolWrapper = java.util.function.UnaryOperator.identity();
    }
  }

  /** Mutates the statements of every pool the test kit makes from now on. */
  static void install() {
    TestDatabase.poolWrapper = ds -> Intercepting.dataSource(ds, SqlMutantsTest::rewrite);
  }

  static void uninstall() {
    active = null;
    TestDatabase.poolWrapper = java.util.function.UnaryOperator.identity();
  }

  /**
   * Runs one test with {@code mutant} in force (none: unmutated); the display name of the failed
   * test, or null when it passed. {@link #appliedCount()} then says how often the mutant applied.
   */
  static String runUnder(Launcher launcher, Mutant mutant, String unit) {
    active = mutant;
    applied.set(0);
    try {
      return failure(launcher, unit);
    } finally {
      active = null;
    }
  }

  static int appliedCount() {
    return applied.get();
  }

  static Throwable lastFailure() {
    return lastFailure;
  }

  /** Applies the mutant in force to a statement of its shape; records the baseline's shapes. */
  private static Object rewrite(java.sql.Connection real, java.lang.reflect.Method m, Object[] a) {
    if ((m.getName().equals("prepareStatement") || m.getName().equals("prepareCall"))
        && a != null
        && a.length > 0
        && a[0] instanceof String sql
        && Statements.mutable(sql)
        && Statements.fromLibraryCode()) {
      String shape = Statements.shape(sql);
      Mutant mutant = active;
      if (mutant == null) {
        executed.add(shape);
        seen.putIfAbsent(shape, sql);
      } else if (mutant.shapes().test(shape)) {
        SqlMutations.Mutation mutation = mutant.pick(sql);
        if (mutation != null) {
          a[0] = mutation.sql();
          applied.incrementAndGet();
        }
      }
    }
    return Intercepting.PROCEED;
  }

  /**
   * Which statement shapes each test of the suites runs, one text of each shape, and how long each
   * test took: found by running every test once unmutated (each must pass).
   */
  static final class Baseline {
    final List<String> units = new ArrayList<>();
    final Map<String, Set<String>> exercises = new LinkedHashMap<>();
    final Map<String, Long> millis = new LinkedHashMap<>();
    final Map<String, String> samples = new java.util.TreeMap<>();

    static Baseline run(Launcher launcher, List<String> suites) {
      Baseline b = new Baseline();
      for (String suite : suites) {
        for (String unit : units(launcher, suite)) {
          executed.clear();
          long t0 = System.nanoTime();
          String failed = failure(launcher, unit);
          if (failed != null) {
            throw new AssertionError("baseline of " + unit + " failed", lastFailure);
          }
          b.units.add(unit);
          b.millis.put(unit, (System.nanoTime() - t0) / 1_000_000);
          b.exercises.put(unit, Set.copyOf(executed));
        }
      }
      b.samples.putAll(seen);
      return b;
    }

    /** The baseline kept by an earlier part of the run for the same suites, or null. */
    static Baseline read(Path file, List<String> suites) throws IOException {
      if (!Files.exists(file)) {
        return null;
      }
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      if (lines.isEmpty() || !lines.get(0).equals("suites " + suites)) {
        return null;
      }
      Baseline b = new Baseline();
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.split("\t", -1);
        if (f[0].equals("unit")) {
          b.units.add(f[1]);
          b.millis.put(f[1], Long.parseLong(f[2]));
          b.exercises.put(f[1], f[3].isEmpty() ? Set.of() : Set.of(f[3].split("\u0001")));
        } else if (f[0].equals("sample")) {
          b.samples.put(f[1], f[2]);
        }
      }
      return b;
    }

    void write(Path file, List<String> suites) throws IOException {
      StringBuilder out = new StringBuilder("suites " + suites + "\n");
      for (String unit : units) {
        out.append("unit\t")
            .append(unit)
            .append('\t')
            .append(millis.get(unit))
            .append('\t')
            .append(String.join("\u0001", exercises.get(unit)))
            .append('\n');
      }
      samples.forEach(
          (shape, sql) ->
              out.append("sample\t").append(shape).append('\t').append(sql).append('\n'));
      Files.createDirectories(file.getParent());
      Files.writeString(file, out.toString(), StandardCharsets.UTF_8);
    }
  }

  /** A suite's tests (methods and templates), by unique id. */
  private static List<String> units(Launcher launcher, String suite) {
    TestPlan plan = launcher.discover(request().selectors(selectClass(suite)).build());
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
    // a mutant may make a test wait for ever: it fails after 3 minutes (on its own thread, so a
    // test spinning without checking for interrupts ends too) and the mutant counts as killed
    launcher.execute(
        request()
            .selectors(selectUniqueId(unit))
            .configurationParameter("junit.jupiter.execution.timeout.default", "3 m")
            .configurationParameter(
                "junit.jupiter.execution.timeout.thread.mode.default", "SEPARATE_THREAD")
            .build(),
        listener);
    var summary = listener.getSummary();
    if (summary.getTotalFailureCount() == 0) {
      return null;
    }
    var first = summary.getFailures().get(0);
    lastFailure = first.getException();
    return first.getTestIdentifier().getDisplayName();
  }

  /** The results file: one row per mutant, kept in the order written. */
  static final class Results {
    private final Map<String, String> rows = new LinkedHashMap<>();
    private final String database;
    private final List<String> suites;

    private Results(String database, List<String> suites) {
      this.database = database;
      this.suites = suites;
    }

    static Results read(Path file, String database, List<String> suites) throws IOException {
      Results r = new Results(database, suites);
      if (Files.exists(file)) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          String[] cells = line.split("\\|");
          if (cells.length > 2 && cells[1].trim().contains(" #")) {
            String key = cells[1].trim();
            // "| key | mutation | survived |  |": a survivor now explained is shown so
            int mutationStart = line.indexOf(" | ", 1) + 3;
            int outcomeAt = line.lastIndexOf(" | survived | ");
            String reason =
                outcomeAt > mutationStart
                    ? equivalence(key, line.substring(mutationStart, outcomeAt).replace("\\|", "|"))
                    : null;
            r.rows.put(
                key,
                reason == null
                    ? line
                    : line.substring(0, outcomeAt) + " | equivalent | " + reason + " |");
          }
        }
      }
      return r;
    }

    boolean done(String key) {
      return rows.containsKey(key);
    }

    boolean survived(String key) {
      return rows.containsKey(key) && rows.get(key).contains("| survived |");
    }

    void add(String key, String mutation, String outcome, String killedBy, Path file)
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
      Map<String, int[]> totals = new java.util.TreeMap<>();
      int[] all = new int[4];
      for (Map.Entry<String, String> row : rows.entrySet()) {
        String target = row.getKey().substring(0, row.getKey().lastIndexOf(" #"));
        int[] t = totals.computeIfAbsent(target, k -> new int[4]);
        t[0]++;
        all[0]++;
        if (row.getValue().contains("| killed |")) {
          t[1]++;
          all[1]++;
        } else if (row.getValue().contains("| survived |")) {
          t[2]++;
          all[2]++;
        } else if (row.getValue().contains("| equivalent |")) {
          t[3]++;
          all[3]++;
        }
      }
      StringBuilder md = new StringBuilder();
      md.append("# Generated SQL mutants (")
          .append(database)
          .append(")\n\nWritten by `SqlMutantsTest` (`localmessage-faults`, `-Dlm.mutants=true`):")
          .append(" every statement the suites run, found by its shape (table names and numbers")
          .append(
              " masked); each of its mutation points (a conjunct dropped, a comparison flipped,")
          .append(" a locking clause, an assignment or an ORDER BY dropped, a LIMIT raised)")
          .append(
              " rewritten where it runs, and the suites' tests that ran the statement run again,")
          .append(" the fastest first, until one fails. Suites: ")
          .append(
              String.join(
                  ", ",
                  suites.stream()
                      .map(n -> "`" + n.substring(n.lastIndexOf('.') + 1) + "`")
                      .toList()))
          .append(". Run: ")
          .append(state)
          .append(". Survivors are explained in `docs/design.md` 8.23.\n\n")
          .append("| statement | mutants | killed | equivalent | survived | not run |\n")
          .append("| --- | ---: | ---: | ---: | ---: | ---: |\n");
      totals.forEach((target, t) -> row(md, target, t));
      row(md, "**all**", all);
      md.append("\n| mutant | mutation | outcome | killed by (or why equivalent) |\n")
          .append("| --- | --- | --- | --- |\n");
      rows.values().forEach(line -> md.append(line).append('\n'));
      Files.createDirectories(file.getParent());
      Files.writeString(file, md.toString(), StandardCharsets.UTF_8);
    }

    private static void row(StringBuilder md, String target, int[] t) {
      md.append("| ")
          .append(target)
          .append(" | ")
          .append(t[0])
          .append(" | ")
          .append(t[1])
          .append(" | ")
          .append(t[3])
          .append(" | ")
          .append(t[2])
          .append(" | ")
          .append(t[0] - t[1] - t[2] - t[3])
          .append(" |\n");
    }
  }
}
