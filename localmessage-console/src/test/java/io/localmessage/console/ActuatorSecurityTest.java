package io.localmessage.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.admin.AuditEntry;
import io.localmessage.console.app.ConsoleApp;
import io.localmessage.testing.TestDatabase;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The actuator endpoint as a door, in an application with Spring Security and the console: the same
 * rule as the console (authenticated, the action authority, CSRF), the operator recorded by name,
 * hostile input answered with 400. Writes are off unless the application opts in.
 */
class ActuatorSecurityTest {
  private static final String EXPOSE =
      "management.endpoints.web.exposure.include=health,localmessage";
  private static TestDatabase db;
  private static ConfigurableApplicationContext app;
  private static LocalMessages lm;
  private static DataSource sql;
  private static String root;
  private static long dead;

  @BeforeAll
  static void start() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
    app = ConsoleApp.start(db, EXPOSE, "localmessage.endpoint.write-enabled=true");
    lm = app.getBean(LocalMessages.class);
    sql = db.dataSource(2);
    root = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    dead =
        lm.inTransaction(c -> lm.save(c, NewMessage.action("payment.capture", "act-1").build()))
            .id();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> lm.admin().get(dead).orElseThrow().status() == MessageStatus.DEAD);
  }

  @AfterAll
  static void stop() {
    if (app != null) {
      app.close();
    }
    if (db != null) {
      db.close();
    }
  }

  /** A browser session after the console's login form, and the CSRF token of its pages. */
  private record Session(Http http, String csrf) {
    HttpResponse<String> post(String path, String json) {
      return http.postJson(path, json, "X-CSRF-TOKEN", csrf);
    }
  }

  private static Session login(String user, String password) {
    Http browser = new Http(root);
    String csrf = Http.csrf(browser.get("/localmessage/login").body());
    HttpResponse<String> ok =
        browser.post("/localmessage/login", "_csrf", csrf, "username", user, "password", password);
    assertThat(ok.headers().firstValue("Location").orElseThrow()).doesNotContain("error");
    return new Session(browser, Http.csrf(browser.get("/localmessage").body()));
  }

  private static long audits() {
    return Sql.count(sql, "SELECT COUNT(*) FROM local_message_audit");
  }

  @Test
  void anonymousGets401ForReadsAndWrites() {
    Http anonymous = new Http(root);
    assertThat(anonymous.get("/actuator/localmessage").statusCode()).isEqualTo(401);
    assertThat(
            anonymous
                .postJson("/actuator/localmessage/pause/payment.capture", "{\"reason\":\"x\"}")
                .statusCode())
        .isIn(401, 403);
    assertThat(lm.admin().paused()).isEmpty();
  }

  @Test
  void aViewerReadsButCannotActEvenWithTheConsolesCsrfToken() {
    long before = audits();
    Session viewer = login(ConsoleApp.VIEWER, ConsoleApp.VIEWER_PASSWORD);
    assertThat(viewer.http().get("/actuator/localmessage").statusCode()).isEqualTo(200);
    assertThat(viewer.http().get("/actuator/localmessage/dead").body()).contains("act-1");
    for (String path :
        List.of(
            "/actuator/localmessage/pause/payment.capture",
            "/actuator/localmessage/requeue/" + dead,
            "/actuator/localmessage/cancel/" + dead,
            "/actuator/localmessage/requeue-dead/payment.capture")) {
      HttpResponse<String> r = viewer.post(path, "{\"reason\":\"let me\"}");
      assertThat(r.statusCode()).as(path).isEqualTo(403);
    }
    assertThat(lm.admin().paused()).isEmpty();
    assertThat(lm.admin().get(dead).orElseThrow().status()).isEqualTo(MessageStatus.DEAD);
    assertThat(audits()).isEqualTo(before);
  }

  @Test
  void anOperatorActsWithCsrfAndIsRecordedByName() {
    Session admin = login(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    HttpResponse<String> noCsrf =
        admin
            .http()
            .postJson("/actuator/localmessage/pause/payment.capture", "{\"reason\":\"deploy\"}");
    assertThat(noCsrf.statusCode()).isEqualTo(403);
    HttpResponse<String> wrongCsrf =
        admin
            .http()
            .postJson(
                "/actuator/localmessage/pause/payment.capture",
                "{\"reason\":\"deploy\"}",
                "X-CSRF-TOKEN",
                "forged");
    assertThat(wrongCsrf.statusCode()).isEqualTo(403);
    assertThat(lm.admin().paused()).isEmpty();

    HttpResponse<String> ok =
        admin.post("/actuator/localmessage/pause/payment.capture", "{\"reason\":\"deploy\"}");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).contains("\"operator\":\"" + ConsoleApp.ADMIN + "\"");
    assertThat(lm.admin().paused()).containsExactly("payment.capture");
    assertThat(
            Sql.count(
                sql,
                "SELECT COUNT(*) FROM local_message_control WHERE biz_type = ? AND updated_by = ?",
                "payment.capture",
                ConsoleApp.ADMIN))
        .isEqualTo(1);
    assertThat(
            admin
                .post("/actuator/localmessage/resume/payment.capture", "{\"reason\":\"done\"}")
                .statusCode())
        .isEqualTo(200);
    assertThat(lm.admin().paused()).isEmpty();
  }

  @Test
  void hostileInputIsA400AndWritesNothing() {
    long before = audits();
    Session admin = login(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    for (String[] bad :
        new String[][] {
          {"/actuator/localmessage/cancel/" + dead, "{\"reason\":\"ok\\nevent=forged\"}"},
          {"/actuator/localmessage/cancel/" + dead, "{\"reason\":\"rtl \\u202e txt\"}"},
          {"/actuator/localmessage/cancel/" + dead, "{\"reason\":\"" + "r".repeat(600) + "\"}"},
          {"/actuator/localmessage/pause/bad%20type!", "{\"reason\":\"x\"}"},
          {"/actuator/localmessage/pause/" + "t".repeat(80), "{\"reason\":\"x\"}"},
          {"/actuator/localmessage/requeue/not-a-number", "{\"reason\":\"x\"}"},
        }) {
      HttpResponse<String> r = admin.post(bad[0], bad[1]);
      assertThat(r.statusCode()).as(bad[0] + " " + bad[1]).isEqualTo(400);
    }
    assertThat(audits()).isEqualTo(before);
    assertThat(lm.admin().paused()).isEmpty();
    assertThat(lm.admin().audit(dead)).extracting(AuditEntry::action).isEmpty();
  }

  @Test
  void anActionWithoutAReasonSaysWhatIsMissing() {
    long before = audits();
    Session admin = login(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    String path = "/actuator/localmessage/requeue/" + dead;
    HttpResponse<String> noBody = admin.http().postNoBody(path, "X-CSRF-TOKEN", admin.csrf());
    assertThat(noBody.statusCode()).isEqualTo(400);
    assertThat(noBody.body()).contains("a reason is required").contains("application/json");
    for (String body : List.of("{}", "{\"reason\":\"  \"}")) {
      HttpResponse<String> r = admin.post(path, body);
      assertThat(r.statusCode()).as(body).isEqualTo(400);
      assertThat(r.body()).as(body).contains("a reason is required");
    }
    HttpResponse<String> unknown =
        admin.post("/actuator/localmessage/undo/1", "{\"reason\":\"x\"}");
    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(unknown.body()).contains("unknown action 'undo'");
    HttpResponse<String> notAnId =
        admin.post("/actuator/localmessage/requeue/abc", "{\"reason\":\"x\"}");
    assertThat(notAnId.body()).contains("'abc' is not a message id");
    assertThat(audits()).isEqualTo(before);
    assertThat(lm.admin().get(dead).orElseThrow().status()).isEqualTo(MessageStatus.DEAD);
  }

  @Test
  void everyLinkTheActuatorAdvertisesAnswersAGet() {
    Session viewer = login(ConsoleApp.VIEWER, ConsoleApp.VIEWER_PASSWORD);
    String links = viewer.http().get("/actuator").body();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"(localmessage[^\"]*)\":\\{\"href\":\"([^\"]+)\"")
            .matcher(links);
    List<String> seen = new java.util.ArrayList<>();
    while (m.find()) {
      seen.add(m.group(1));
      String href = m.group(2).replaceFirst("^https?://[^/]+", "");
      if (href.contains("{")) {
        // a template: fill its selectors the way an operator would
        href = href.replace("{id}", Long.toString(dead)).replace("{action}", "requeue");
        href = href.replace("{target}", Long.toString(dead));
        if (href.contains("/requeue/")) {
          continue; // a POST-only path: reading it is not what the link offers
        }
      }
      assertThat(viewer.http().get(href).statusCode()).as(m.group(1) + " " + href).isEqualTo(200);
    }
    assertThat(seen).contains("localmessage", "localmessage-id");
    String one = viewer.http().get("/actuator/localmessage/" + dead).body();
    assertThat(one).contains("\"idemKey\":\"act-1\"").contains("\"audit\":[");
    HttpResponse<String> none = viewer.http().get("/actuator/localmessage/99999999");
    assertThat(none.statusCode()).isEqualTo(404);
    assertThat(none.body()).contains("no message with id 99999999");
  }

  @Test
  void withoutTheOptInTheEndpointIsReadOnlyEvenForOperators() {
    try (TestDatabase other = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
        ConfigurableApplicationContext readOnly = ConsoleApp.start(other, EXPOSE)) {
      String base =
          "http://127.0.0.1:" + readOnly.getEnvironment().getProperty("local.server.port");
      Http browser = new Http(base);
      String csrf = Http.csrf(browser.get("/localmessage/login").body());
      browser.post(
          "/localmessage/login",
          "_csrf",
          csrf,
          "username",
          ConsoleApp.ADMIN,
          "password",
          ConsoleApp.ADMIN_PASSWORD);
      String token = Http.csrf(browser.get("/localmessage").body());
      assertThat(browser.get("/actuator/localmessage").statusCode()).isEqualTo(200);
      HttpResponse<String> r =
          browser.postJson(
              "/actuator/localmessage/pause/payment.capture",
              "{\"reason\":\"deploy\"}",
              "X-CSRF-TOKEN",
              token);
      assertThat(r.statusCode()).isIn(403, 404, 405);
      LocalMessages otherLm = readOnly.getBean(LocalMessages.class);
      assertThat(otherLm.admin().paused()).isEmpty();
      assertThat(otherLm.admin().audit(1).stream().map(AuditEntry::action).toList()).isEmpty();
    }
  }
}
