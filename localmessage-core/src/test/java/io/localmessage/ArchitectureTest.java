package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The walls between the modules, read from the sources of the whole build: every reference to a
 * {@code io.localmessage...} type (an import or a qualified name) must point at the module's own
 * packages or at a module it may depend on, and never at another module's {@code internal}
 * packages, except through the seams listed here. Inside the core, the public packages reach the
 * internal ones only through the listed seams.
 */
class ArchitectureTest {
  /** Which other modules each module's main code may use. */
  private static final Map<String, Set<String>> ALLOWED_MODULES =
      Map.ofEntries(
          Map.entry("localmessage-core", Set.of()),
          Map.entry("localmessage-test", Set.of("localmessage-core")),
          Map.entry("localmessage-http", Set.of("localmessage-core")),
          Map.entry("localmessage-kafka", Set.of("localmessage-core")),
          Map.entry("localmessage-spring-boot-starter", Set.of("localmessage-core")),
          Map.entry(
              "localmessage-console",
              Set.of("localmessage-core", "localmessage-spring-boot-starter")),
          Map.entry("localmessage-cli", Set.of("localmessage-core")),
          Map.entry(
              "localmessage-demo",
              Set.of(
                  "localmessage-core",
                  "localmessage-http",
                  "localmessage-kafka",
                  "localmessage-test")),
          Map.entry(
              "localmessage-bench",
              // http: the io workload's HTTP tickets (IoDrain)
              Set.of(
                  "localmessage-core",
                  "localmessage-http",
                  "localmessage-kafka",
                  "localmessage-test")),
          Map.entry("localmessage-faults", Set.of()));

  /** The internal types another module may use, and why. */
  private static final Map<String, Set<String>> INTERNAL_SEAMS =
      Map.of(
          // the crash hook of the test kit
          "localmessage-test", Set.of("io.localmessage.internal.engine.Engines"),
          // the one transaction runner: the idempotent endpoint's transactions (design 8.18)
          "localmessage-http", Set.of("io.localmessage.internal.store.Transactions"),
          // and the console's revocation statements, on autocommit connections of the runner
          "localmessage-console", Set.of("io.localmessage.internal.store.Transactions"),
          // and the inbox consumer's batch transactions, its handlers on the watched connection
          "localmessage-kafka",
              Set.of(
                  "io.localmessage.internal.store.Transactions",
                  "io.localmessage.internal.store.TransactionGuard"),
          // the test of the properties' wiring reads the engine's settings; the alert rules' test
          // drives the meters of events a healthy engine cannot be made to produce
          "localmessage-spring-boot-starter/test",
              Set.of(
                  "io.localmessage.internal.engine.Settings",
                  "io.localmessage.internal.metrics.MicrometerMetrics"));

  /** The internal types the core's public packages may name: the seams of the API. */
  private static final Set<String> CORE_API_SEAMS =
      Set.of(
          "io.localmessage.internal.engine.Engines",
          "io.localmessage.internal.engine.Settings",
          // the builder's package-private test seam for the engine's interval clock (design 8.22)
          "io.localmessage.internal.engine.Ticker",
          "io.localmessage.internal.dialect.BuiltInDialects",
          "io.localmessage.internal.dialect.Codes",
          "io.localmessage.internal.store.SchemaScripts",
          "io.localmessage.internal.store.Tables",
          "io.localmessage.internal.store.Retention",
          // the one transaction runner: Inbox's transactions (design 8.18)
          "io.localmessage.internal.store.Transactions",
          // the one classification of SQL errors (Dialect.errorAbortsTransaction)
          "io.localmessage.internal.store.SqlErrors",
          // TracePropagation.observation(registry): the optional Micrometer Observation binding
          "io.localmessage.internal.tracing.ObservationTracing");

  private static final Pattern REFERENCE =
      Pattern.compile("\\bio\\.localmessage((?:\\.[a-z][a-z0-9_]*)*)\\.([A-Z][A-Za-z0-9_]*)");

  private static Path root;
  private static final Map<String, String> PACKAGE_OWNER = new TreeMap<>();

  @BeforeAll
  static void readTheBuild() throws IOException {
    root = Path.of("").toAbsolutePath().getParent();
    assertThat(root.resolve("pom.xml")).as("the build's parent POM next to the core").exists();
    for (String module : ALLOWED_MODULES.keySet()) {
      for (String kind : List.of("main", "test")) {
        for (Path f : sources(module, kind)) {
          String pkg = packageOf(f);
          String owner = PACKAGE_OWNER.putIfAbsent(pkg, module);
          assertThat(owner == null || owner.equals(module))
              .as("package %s is split between %s and %s", pkg, owner, module)
              .isTrue();
        }
      }
    }
  }

  @Test
  void noModuleUsesAnotherModulesInternalsOrAModuleItMayNotDependOn() {
    List<String> violations = new ArrayList<>();
    for (String module : ALLOWED_MODULES.keySet()) {
      for (String kind : List.of("main", "test")) {
        for (Path f : sources(module, kind)) {
          for (String type : references(f)) {
            String pkg = type.substring(0, type.lastIndexOf('.'));
            String owner = PACKAGE_OWNER.get(pkg);
            if (owner == null || owner.equals(module)) {
              continue;
            }
            String where = root.relativize(f) + " uses " + type;
            boolean internal = pkg.contains(".internal");
            Set<String> seams =
                INTERNAL_SEAMS.getOrDefault(
                    kind.equals("main") ? module : module + "/test", Set.of());
            if (internal && !seams.contains(type)) {
              violations.add(where + ": an internal type of " + owner);
            } else if (kind.equals("main") && !ALLOWED_MODULES.get(module).contains(owner)) {
              violations.add(where + ": " + module + " may not depend on " + owner);
            }
          }
        }
      }
    }
    assertThat(violations).isEmpty();
  }

  @Test
  void theCoresPublicPackagesReachItsInternalsOnlyThroughTheSeams() {
    List<String> violations = new ArrayList<>();
    for (Path f : sources("localmessage-core", "main")) {
      if (packageOf(f).contains(".internal")) {
        continue;
      }
      for (String type : references(f)) {
        if (type.contains(".internal.") && !CORE_API_SEAMS.contains(type)) {
          violations.add(root.relativize(f) + " uses " + type);
        }
      }
    }
    assertThat(violations).isEmpty();
  }

  @Test
  void theRulesSeeEveryModuleOfTheBuild() throws IOException {
    String pom = Files.readString(root.resolve("pom.xml"));
    Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(pom);
    Set<String> modules = new TreeSet<>();
    while (m.find()) {
      modules.add(m.group(1));
    }
    Set<String> withJava = new TreeSet<>();
    for (String module : modules) {
      if (Files.isDirectory(root.resolve(module).resolve("src"))) {
        withJava.add(module);
      }
    }
    assertThat(ALLOWED_MODULES.keySet()).containsAll(withJava);
  }

  private static List<Path> sources(String module, String kind) {
    Path dir = root.resolve(module).resolve("src").resolve(kind).resolve("java");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String packageOf(Path f) {
    Matcher m = Pattern.compile("(?m)^package\\s+([\\w.]+);").matcher(read(f));
    return m.find() ? m.group(1) : "";
  }

  /** Fully qualified {@code io.localmessage...} types named in {@code f}, comments included. */
  private static Set<String> references(Path f) {
    Set<String> out = new TreeSet<>();
    Matcher m = REFERENCE.matcher(read(f));
    while (m.find()) {
      out.add("io.localmessage" + m.group(1) + "." + m.group(2));
    }
    return out;
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
