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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The console behind Spring Security, over real HTTP: who gets in, who may act, CSRF, escaping, and
 * that the rest of the application stays secured by Boot's default chain.
 */
class ConsoleSecurityTest {
  private static TestDatabase db;
  private static ConfigurableApplicationContext app;
  private static LocalMessages lm;
  private static DataSource sql;
  private static String root;
  private static long dead;

  @BeforeAll
  static void start() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
    app = ConsoleApp.start(db);
    lm = app.getBean(LocalMessages.class);
    sql = db.dataSource(2);
    root = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    dead =
        lm.inTransaction(
                c ->
                    lm.save(
                        c,
                        NewMessage.action("payment.capture", "pay-<b>1</b>")
                            .aggregateId("order-<script>alert(1)</script>")
                            .payload(
                                "{\"card\":\"4111111111111111\",\"note\":\"<img src=x onerror=alert(1)>\"}"
                                    .getBytes(StandardCharsets.UTF_8))
                            .build()))
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

  private static Http client() {
    return new Http(root);
  }

  @Test
  void unauthenticatedBrowsersAreSentToTheLoginFormAndOthersGet401() {
    HttpResponse<String> browser = client().get("/localmessage/dead", "Accept", "text/html");
    assertThat(browser.statusCode()).isEqualTo(302);
    assertThat(browser.headers().firstValue("Location").orElseThrow())
        .endsWith("/localmessage/login");

    assertThat(client().get("/localmessage", "Accept", "application/json").statusCode())
        .isEqualTo(401);
    assertThat(client().get("/localmessage/tickets/" + dead).statusCode()).isEqualTo(401);
    assertThat(
            client()
                .post("/localmessage/actions/requeue", "id", "" + dead, "reason", "x")
                .statusCode())
        .isIn(401, 403);
    assertThat(lm.admin().get(dead).orElseThrow().status()).isEqualTo(MessageStatus.DEAD);

    HttpResponse<String> login = client().get("/localmessage/login");
    assertThat(login.statusCode()).isEqualTo(200);
    assertThat(login.body()).contains("name=\"username\"").contains("name=\"_csrf\"");
    assertThat(client().get("/localmessage/console.css").statusCode()).isEqualTo(200);
    assertThat(client().get("/localmessage/console.js").statusCode()).isEqualTo(200);
  }

  @Test
  void wrongPasswordIsRejected() {
    assertThat(
            client()
                .basic(ConsoleApp.ADMIN, "guess")
                .get("/localmessage", "Accept", "application/json")
                .statusCode())
        .isEqualTo(401);
  }

  @Test
  void theRestOfTheApplicationKeepsBootsDefaultSecurity() {
    assertThat(client().get("/hello", "Accept", "application/json").statusCode()).isEqualTo(401);
    HttpResponse<String> ok =
        client().basic(ConsoleApp.VIEWER, ConsoleApp.VIEWER_PASSWORD).get("/hello");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).isEqualTo("hello");
  }

  @Test
  void aViewerSeesButCannotAct() {
    Http viewer = client().basic(ConsoleApp.VIEWER, ConsoleApp.VIEWER_PASSWORD);
    HttpResponse<String> page = viewer.get("/localmessage/tickets/" + dead);
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body()).contains("victor (read-only)").doesNotContain("requeue-form");

    String csrf = Http.csrf(page.body());
    HttpResponse<String> act =
        viewer.post(
            "/localmessage/actions/requeue", "_csrf", csrf, "id", "" + dead, "reason", "let me");
    assertThat(act.statusCode()).isEqualTo(403);
    assertThat(
            viewer
                .post(
                    "/localmessage/actions/pause",
                    "_csrf",
                    csrf,
                    "type",
                    "payment.capture",
                    "reason",
                    "x")
                .statusCode())
        .isEqualTo(403);
    assertThat(lm.admin().get(dead).orElseThrow().status()).isEqualTo(MessageStatus.DEAD);
    assertThat(lm.admin().paused()).isEmpty();
    assertThat(lm.admin().audit(dead)).isEmpty();
  }

  /** A browser session after the console's login form. */
  private static Http loggedIn(String user, String password) {
    Http browser = client();
    String csrf = Http.csrf(browser.get("/localmessage/login").body());
    HttpResponse<String> ok =
        browser.post("/localmessage/login", "_csrf", csrf, "username", user, "password", password);
    assertThat(ok.headers().firstValue("Location").orElseThrow()).doesNotContain("error");
    return browser;
  }

  @Test
  void withBasicAuthenticationAMissingCsrfTokenIsAlsoRejected() {
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    HttpResponse<String> noCsrf =
        admin.post("/localmessage/actions/pause", "type", "payment.capture", "reason", "deploy");
    assertThat(noCsrf.statusCode()).isIn(401, 403);
    assertThat(lm.admin().paused()).isEmpty();
  }

  @Test
  void actionsNeedTheCsrfTokenAndAReason() {
    Http admin = loggedIn(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    HttpResponse<String> page = admin.get("/localmessage/type?name=payment.capture");
    assertThat(page.statusCode()).isEqualTo(200);
    String csrf = Http.csrf(page.body());

    HttpResponse<String> noCsrf =
        admin.post("/localmessage/actions/pause", "type", "payment.capture", "reason", "deploy");
    assertThat(noCsrf.statusCode()).isEqualTo(403);
    HttpResponse<String> forged =
        admin.post(
            "/localmessage/actions/pause",
            "_csrf",
            "forged",
            "type",
            "payment.capture",
            "reason",
            "deploy");
    assertThat(forged.statusCode()).isEqualTo(403);
    assertThat(lm.admin().paused()).isEmpty();

    HttpResponse<String> noReason =
        admin.post(
            "/localmessage/actions/pause", "_csrf", csrf, "type", "payment.capture", "reason", " ");
    assertThat(noReason.statusCode()).isEqualTo(400);
    assertThat(noReason.body()).contains("a reason is required");
    assertThat(lm.admin().paused()).isEmpty();

    HttpResponse<String> paused =
        admin.post(
            "/localmessage/actions/pause",
            "_csrf",
            csrf,
            "type",
            "payment.capture",
            "reason",
            "gateway maintenance");
    assertThat(paused.statusCode()).isEqualTo(303);
    assertThat(paused.headers().firstValue("Location").orElseThrow())
        .isEqualTo("/localmessage/type?name=payment.capture&done=paused&n=1");
    assertThat(lm.admin().paused()).containsExactly("payment.capture");
    assertThat(
            Sql.count(
                sql,
                "SELECT COUNT(*) FROM local_message_audit WHERE action = 'PAUSE'"
                    + " AND operator = ? AND reason = ?",
                ConsoleApp.ADMIN,
                "gateway maintenance"))
        .isEqualTo(1);

    HttpResponse<String> resumed =
        admin.post(
            "/localmessage/actions/resume",
            "_csrf",
            csrf,
            "type",
            "payment.capture",
            "reason",
            "done");
    assertThat(resumed.statusCode()).isEqualTo(303);
    assertThat(lm.admin().paused()).isEmpty();
  }

  @Test
  void theLoginFormStartsASession() {
    Http browser = client();
    String csrf = Http.csrf(browser.get("/localmessage/login").body());
    HttpResponse<String> wrong =
        browser.post(
            "/localmessage/login", "_csrf", csrf, "username", ConsoleApp.ADMIN, "password", "nope");
    assertThat(wrong.statusCode()).isEqualTo(302);
    assertThat(wrong.headers().firstValue("Location").orElseThrow())
        .endsWith("/localmessage/login?error");

    csrf = Http.csrf(browser.get("/localmessage/login").body());
    HttpResponse<String> ok =
        browser.post(
            "/localmessage/login",
            "_csrf",
            csrf,
            "username",
            ConsoleApp.ADMIN,
            "password",
            ConsoleApp.ADMIN_PASSWORD);
    assertThat(ok.statusCode()).isEqualTo(302);
    HttpResponse<String> overview = browser.get("/localmessage", "Accept", "text/html");
    assertThat(overview.statusCode()).isEqualTo(200);
    assertThat(overview.body()).contains("Backlog per biz type").contains(ConsoleApp.ADMIN);
    assertThat(overview.headers().firstValue("Content-Security-Policy").orElseThrow())
        .contains("script-src 'self'");
  }

  @Test
  void everythingShownIsEscapedAndPayloadsAreRedacted() {
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    for (String path :
        List.of(
            "/localmessage/tickets/" + dead,
            "/localmessage/dead?type=payment.capture",
            "/localmessage/search?q="
                + java.net.URLEncoder.encode(
                    "order-<script>alert(1)</script>", StandardCharsets.UTF_8))) {
      String body = admin.get(path).body();
      assertThat(body)
          .as(path)
          .contains("order-&lt;script&gt;alert(1)&lt;/script&gt;")
          .doesNotContain("<script>alert(1)")
          .doesNotContain("<b>1</b>");
      if (!path.contains("search")) {
        assertThat(body)
            .as(path)
            .contains("&quot;card&quot;:&quot;****1111&quot;")
            .doesNotContain("4111111111111111")
            .contains("&lt;img src=x onerror=alert(1)&gt;");
      }
    }
  }

  @Test
  void unknownTicketsAndBadInputAreClearErrors() {
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    HttpResponse<String> missing = admin.get("/localmessage/tickets/987654321");
    assertThat(missing.statusCode()).isEqualTo(200);
    assertThat(missing.body()).contains("Not in the table");
    assertThat(admin.get("/localmessage/tickets/abc").statusCode()).isEqualTo(404);
    HttpResponse<String> bad = admin.get("/localmessage/dead?afterId=-3");
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).contains("afterId must be a non-negative number");
    String csrf = Http.csrf(admin.get("/localmessage").body());
    HttpResponse<String> none =
        admin.post("/localmessage/actions/requeue", "_csrf", csrf, "reason", "x");
    assertThat(none.statusCode()).isEqualTo(400);
    assertThat(none.body()).contains("select at least one ticket");
    HttpResponse<String> escape =
        admin.post(
            "/localmessage/actions/cancel",
            "_csrf",
            csrf,
            "id",
            "987654321",
            "reason",
            "x",
            "back",
            "https://evil.example/");
    assertThat(escape.statusCode()).isEqualTo(303);
    assertThat(escape.headers().firstValue("Location").orElseThrow())
        .isEqualTo("/localmessage/tickets/987654321?done=canceled&n=0");
    assertThat(
            Sql.count(sql, "SELECT COUNT(*) FROM local_message_audit WHERE ticket_id = 987654321"))
        .isZero();
  }

  @Test
  void cancelOfATicketInFlightShowsWhyItWasRefused() {
    long busy =
        lm.inTransaction(c -> lm.save(c, NewMessage.action("report.build", "r-busy").build())).id();
    // a replica holds a live lease on it: claimed, its lease ending in an hour
    Sql.update(
        sql,
        "UPDATE local_message SET lease_owner = 'replica-9', attempts = 1,"
            + " next_retry_at = now() + interval '1 hour' WHERE id = ?",
        busy);
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    String csrf = Http.csrf(admin.get("/localmessage/tickets/" + busy).body());
    HttpResponse<String> cancel =
        admin.post(
            "/localmessage/actions/cancel", "_csrf", csrf, "id", "" + busy, "reason", "obsolete");
    assertThat(cancel.statusCode()).isEqualTo(409);
    assertThat(cancel.body())
        .contains("In flight")
        .contains("message " + busy)
        .contains("replica-9")
        .contains("pause the type or wait for the outcome");
    assertThat(lm.admin().get(busy).orElseThrow().status()).isEqualTo(MessageStatus.PENDING);
    assertThat(lm.admin().audit(busy)).isEmpty();
  }

  @Test
  void auditEntriesCarryThePrincipalsName() {
    long other =
        lm.inTransaction(c -> lm.save(c, NewMessage.action("report.build", "r-1").build())).id();
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    String csrf = Http.csrf(admin.get("/localmessage/tickets/" + other).body());
    HttpResponse<String> cancel =
        admin.post(
            "/localmessage/actions/cancel",
            "_csrf",
            csrf,
            "id",
            "" + other,
            "reason",
            "obsolete report");
    assertThat(cancel.statusCode()).isEqualTo(303);
    assertThat(lm.admin().get(other).orElseThrow().status()).isEqualTo(MessageStatus.CANCELED);
    assertThat(lm.admin().audit(other))
        .extracting(AuditEntry::action, AuditEntry::operator, AuditEntry::reason)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("CANCEL", ConsoleApp.ADMIN, "obsolete report"));
    String page = admin.get("/localmessage/tickets/" + other + "?done=canceled&n=1").body();
    assertThat(page).contains("Ticket canceled.").contains("obsolete report").contains(">CANCEL<");
  }
}
