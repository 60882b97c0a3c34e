package io.localmessage.readme;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Code in the READMEs and docs cannot rot: a fenced block announced by {@code <!-- snippet: path
 * -->} (or {@code path#region}, between {@code tag::region[]} and {@code end::region[]}) must be
 * exactly that compiled, tested file or region. The quick starts' dependencies are the ones the
 * quick-start tests run with.
 */
class ReadmeSnippetsTest {
  private static final Pattern MARKER = Pattern.compile("^<!-- snippet: (\\S+?)(?:#(\\S+))? -->$");
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  @Test
  void everyAnnouncedSnippetIsTheCompiledCode() throws IOException {
    List<String> checked = new ArrayList<>();
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      List<Path> files = new ArrayList<>(docs.filter(p -> p.toString().endsWith(".md")).toList());
      files.add(ROOT.resolve("README.md"));
      files.add(ROOT.resolve("localmessage-spring-boot-starter/README.md"));
      files.add(ROOT.resolve("localmessage-console/README.md"));
      for (Path file : files) {
        List<String> lines = Files.readAllLines(file);
        for (int i = 0; i < lines.size(); i++) {
          Matcher m = MARKER.matcher(lines.get(i).strip());
          if (!m.matches()) {
            continue;
          }
          String where = ROOT.relativize(file) + ":" + (i + 1);
          assertThat(lines.get(i + 1)).as(where + " a fenced block follows").startsWith("```");
          StringBuilder block = new StringBuilder();
          int j = i + 2;
          while (!lines.get(j).startsWith("```")) {
            block.append(lines.get(j)).append('\n');
            j++;
          }
          String source = Files.readString(ROOT.resolve(m.group(1)));
          String expected = m.group(2) == null ? source : region(source, m.group(2), where);
          assertThat(block.toString()).as(where + " shows " + m.group(0)).isEqualTo(expected);
          checked.add(ROOT.relativize(file) + " " + m.group(1));
        }
      }
    }
    assertThat(checked.stream().filter(c -> c.startsWith("README.md "))).hasSize(1);
    assertThat(checked.stream().filter(c -> c.startsWith("localmessage-spring-boot-starter/")))
        .hasSizeGreaterThanOrEqualTo(8);
    assertThat(checked.stream().filter(c -> c.startsWith("localmessage-console/"))).hasSize(1);
  }

  @Test
  void theStarterQuickStartNamesTheDependenciesItsTestsRunWith() throws IOException {
    String readme = Files.readString(ROOT.resolve("localmessage-spring-boot-starter/README.md"));
    String quickStart = readme.substring(readme.indexOf("## Quick start"));
    String xml =
        quickStart.substring(
            quickStart.indexOf("```xml"),
            quickStart.indexOf("```\n", quickStart.indexOf("```xml") + 6));
    String pom = Files.readString(ROOT.resolve("localmessage-spring-boot-starter/pom.xml"));
    Matcher artifacts = Pattern.compile("<artifactId>([^<]+)</artifactId>").matcher(xml);
    List<String> named = new ArrayList<>();
    while (artifacts.find()) {
      named.add(artifacts.group(1));
    }
    assertThat(named)
        .contains(
            "spring-boot-starter-flyway",
            "flyway-database-postgresql",
            "spring-boot-starter-actuator",
            "spring-boot-starter-data-jpa");
    for (String artifact : named) {
      if (!artifact.equals("localmessage-spring-boot-starter")) {
        assertThat(pom).as(artifact).contains("<artifactId>" + artifact + "</artifactId>");
      }
    }
  }

  /** The lines between the region's tags, without their common indentation. */
  private static String region(String source, String name, String where) {
    List<String> lines = source.lines().toList();
    int start = -1;
    int end = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).strip().equals("// tag::" + name + "[]")) {
        start = i + 1;
      } else if (lines.get(i).strip().equals("// end::" + name + "[]")) {
        end = i;
      }
    }
    assertThat(start).as(where + ": region " + name + " found").isPositive();
    assertThat(end).as(where + ": region " + name + " ends").isGreaterThan(start);
    List<String> body = lines.subList(start, end);
    int indent =
        body.stream()
            .filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length())
            .min()
            .orElse(0);
    StringBuilder out = new StringBuilder();
    for (String l : body) {
      out.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
    }
    return out.toString();
  }
}
