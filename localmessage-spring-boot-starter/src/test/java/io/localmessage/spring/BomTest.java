package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code localmessage-bom} pins every published artifact at the build's version, and only those: a
 * module added to the build is either in the BOM or named here as not published.
 */
class BomTest {
  private static final List<String> NOT_PUBLISHED =
      List.of("localmessage-bom", "localmessage-demo", "localmessage-faults", "localmessage-bench");
  private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
  private static final Pattern MANAGED =
      Pattern.compile(
          "<groupId>io\\.localmessage</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*"
              + "<version>([^<]+)</version>");

  @Test
  void theBomPinsEveryPublishedModuleAtTheBuildsVersion() throws Exception {
    Path root = Path.of("").toAbsolutePath().getParent();
    String parent = Files.readString(root.resolve("pom.xml"));
    String version = firstVersion(parent);
    List<String> published = new ArrayList<>();
    Matcher modules = MODULE.matcher(parent);
    while (modules.find()) {
      if (!NOT_PUBLISHED.contains(modules.group(1))) {
        published.add(modules.group(1));
      }
    }
    String bom = Files.readString(root.resolve("localmessage-bom/pom.xml"));
    assertThat(firstVersion(bom)).isEqualTo(version);
    List<String> pinned = new ArrayList<>();
    Matcher managed = MANAGED.matcher(bom.substring(bom.indexOf("<dependencyManagement>")));
    while (managed.find()) {
      pinned.add(managed.group(1));
      assertThat(managed.group(2)).as(managed.group(1)).isEqualTo(version);
    }
    assertThat(pinned).containsExactlyInAnyOrderElementsOf(published);
    assertThat(bom).doesNotContain("<parent>");
  }

  /** The project's own version: the first {@code <version>} after its artifactId. */
  private static String firstVersion(String pom) {
    String afterArtifact =
        pom.substring(pom.indexOf("</artifactId>", pom.indexOf("</parent>") + 1));
    Matcher m = Pattern.compile("<version>([^<]+)</version>").matcher(afterArtifact);
    assertThat(m.find()).isTrue();
    return m.group(1);
  }
}
