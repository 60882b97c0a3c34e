package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.Message;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.PermanentFailure;
import io.localmessage.internal.metrics.MicrometerMetrics;
import io.localmessage.spi.EngineListener;
import io.localmessage.spring.internal.LoopMeters;
import io.localmessage.testing.TestDatabase;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The shipped Prometheus alert rules ({@code docs/ops/prometheus}) and Grafana dashboard ({@code
 * docs/ops/grafana}): every series they name is one that a real Prometheus registry exports for a
 * running engine, and {@code promtool} checks them and runs their unit tests (series that fire and
 * series that do not).
 */
class PrometheusAlertRulesTest {
  private static final Pattern SERIES = Pattern.compile("\\blocalmessage_[a-z_]+\\b");

  @Configuration(proxyBeanMethods = false)
  static class App {
    @Bean
    PrometheusMeterRegistry prometheus() {
      return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    }

    @LocalMessageHandler("alerts.ok")
    void ok(Message m) {}

    @LocalMessageHandler("alerts.dead")
    void dead(Message m) throws PermanentFailure {
      throw new PermanentFailure("the remote side refused it");
    }
  }

  @Test
  void everySeriesTheRulesNameIsExportedByARealRegistry() throws IOException {
    Set<String> named = new TreeSet<>();
    for (String file :
        new String[] {
          "prometheus/localmessage-alerts.yml",
          "prometheus/localmessage-alerts.test.yml",
          "grafana/localmessage-dashboard.json"
        }) {
      Matcher m = SERIES.matcher(Files.readString(rulesDir().resolveSibling(file)));
      while (m.find()) {
        named.add(m.group());
      }
    }
    assertThat(named).contains("localmessage_due", "localmessage_loop_stuck");

    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL)) {
      Contexts.runner(db)
          .withUserConfiguration(App.class)
          .withPropertyValues("localmessage.poll-interval=100ms")
          .run(
              ctx -> {
                PrometheusMeterRegistry registry = ctx.getBean(PrometheusMeterRegistry.class);
                LocalMessages lm = ctx.getBean(LocalMessages.class);
                new LoopMeters(lm).bindTo(registry); // what Boot's metrics auto-configuration does
                long ok = save(lm, "alerts.ok", "o1");
                save(lm, "alerts.ok", "o1"); // a duplicate
                long dead = save(lm, "alerts.dead", "d1");
                await()
                    .atMost(Duration.ofSeconds(10))
                    .until(
                        () ->
                            lm.admin().get(ok).isEmpty()
                                && lm.admin()
                                    .get(dead)
                                    .map(t -> t.status() == MessageStatus.DEAD)
                                    .orElse(false));
                // the events a healthy test cannot provoke, through the engine's own binding
                EngineListener meters = MicrometerMetrics.bind(registry, lm.admin());
                meters.writeBackDropped("alerts.ok", 1);
                meters.casConflicts("alerts.ok", 1);
                meters.fenced("alerts.ok", 1);
                meters.leaseRenewalFailed("alerts.ok", 1);
                meters.saveFailed("alerts.ok", new IllegalStateException("database away"));
                meters.expiredLastAttempt(1);
                meters.claimed("alerts.ok", 1, 1, Duration.ofMillis(1)); // a lease re-claim

                String scrape = registry.scrape();
                Set<String> exported = new TreeSet<>();
                for (String line : scrape.split("\n")) {
                  if (!line.startsWith("#") && !line.isBlank()) {
                    String name = line.split("[{ ]", 2)[0];
                    exported.add(name);
                    // a timer or summary is also named by its base name in descriptions
                    exported.add(name.replaceFirst("_(count|sum|max|bucket)$", ""));
                  }
                }
                Files.writeString(
                    Path.of("target", "localmessage-scrape.txt"), scrape, StandardCharsets.UTF_8);
                assertThat(exported).as("exported series").containsAll(named);
                assertThat(scrape)
                    .contains("localmessage_dead{biz_type=\"alerts.dead\"} 1.0")
                    .contains(
                        "localmessage_deliveries_total{biz_type=\"alerts.dead\",result=\"permanent\"} 1.0")
                    .contains("localmessage_loop_stuck{loop=\"poller\"} 0.0");
              });
    }
  }

  @Test
  void promtoolChecksTheRulesAndRunsTheirTests() throws Exception {
    String promtool = promtool();
    Assumptions.assumeTrue(
        promtool != null,
        "promtool is not installed: ./run-tests installs it (Debian package prometheus)");
    Path dir = rulesDir();
    String check = run(dir, promtool, "check", "rules", "localmessage-alerts.yml");
    assertThat(check).contains("SUCCESS: 9 rules found");
    String test = run(dir, promtool, "test", "rules", "localmessage-alerts.test.yml");
    assertThat(test).contains("SUCCESS");
  }

  private static long save(LocalMessages lm, String type, String key) {
    return lm.inTransaction(c -> lm.save(c, NewMessage.action(type, key).build())).id();
  }

  /** Runs a command; fails with its output unless it exits 0 within a minute. */
  private static String run(Path dir, String... command) throws Exception {
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    boolean done = p.waitFor(60, TimeUnit.SECONDS);
    if (!done) {
      p.destroyForcibly();
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    System.out.println(String.join(" ", command) + "\n" + out);
    assertThat(done).as("%s finished within a minute", command[1]).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", command) + " said:\n" + out).isZero();
    return out;
  }

  private static String promtool() {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
      File f = new File(dir, "promtool");
      if (f.canExecute()) {
        return f.getAbsolutePath();
      }
    }
    return null;
  }

  private static Path rulesDir() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      Path dir = p.resolve("docs/ops/prometheus");
      if (Files.isDirectory(dir)) {
        return dir;
      }
    }
    throw new IllegalStateException(
        "docs/ops/prometheus not found above " + Path.of("").toAbsolutePath());
  }
}
