package io.localmessage.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.console.app.ConsoleApp;
import io.localmessage.testing.TestDatabase;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The console behind Spring Security as a door: anonymous, viewer and operator against every page
 * and action; missing, wrong and misplaced CSRF tokens; hostile input in every field the console
 * shows or accepts. Nothing refused may write anything.
 */
class SpringModeSecurityTest {
  private static final String HOSTILE = "<script>alert(1)</script>\u202e\u001b[2J";
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
                        NewMessage.action("payment.capture", "door-1")
                            .aggregateId("agg-door")
                            .header("x-note", "<b>bold</b>")
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

  private static Http loggedIn(String user, String password) {
    Http browser = client();
    String csrf = Http.csrf(browser.get("/localmessage/login").body());
    HttpResponse<String> ok =
        browser.post("/localmessage/login", "_csrf", csrf, "username", user, "password", password);
    assertThat(ok.headers().firstValue("Location").orElseThrow()).doesNotContain("error");
    return browser;
  }

  private static long audits() {
    return Sql.count(sql, "SELECT COUNT(*) FROM local_message_audit");
  }

  @Test
  void anonymousSeesNothingAndChangesNothing() {
    long before = audits();
    for (String page :
        List.of(
            "/localmessage",
            "/localmessage/dead",
            "/localmessage/tickets/" + dead,
            "/localmessage/search?q=door-1",
            "/localmessage/type?name=payment.capture")) {
      assertThat(client().get(page).statusCode()).as(page).isEqualTo(401);
    }
    for (String action : List.of("requeue", "cancel", "pause", "resume", "requeue-all")) {
      assertThat(
              client()
                  .post(
                      "/localmessage/actions/" + action,
                      "id",
                      "" + dead,
                      "type",
                      "payment.capture",
                      "reason",
                      "x")
                  .statusCode())
          .as(action)
          .isIn(401, 403);
    }
    assertThat(audits()).isEqualTo(before);
  }

  @Test
  void aViewerSeesButEveryActionIsRefused() {
    long before = audits();
    Http viewer = loggedIn(ConsoleApp.VIEWER, ConsoleApp.VIEWER_PASSWORD);
    HttpResponse<String> page = viewer.get("/localmessage/tickets/" + dead);
    assertThat(page.statusCode()).isEqualTo(200);
    String csrf = Http.csrf(page.body());
    for (String action : List.of("requeue", "cancel", "pause", "resume", "requeue-all")) {
      assertThat(
              viewer
                  .post(
                      "/localmessage/actions/" + action,
                      "_csrf",
                      csrf,
                      "id",
                      "" + dead,
                      "type",
                      "payment.capture",
                      "reason",
                      "x")
                  .statusCode())
          .as(action)
          .isEqualTo(403);
    }
    assertThat(audits()).isEqualTo(before);
    assertThat(lm.admin().paused()).isEmpty();
  }

  @Test
  void anOperatorNeedsTheCsrfTokenInTheBodyNotTheQueryString() {
    Http admin = loggedIn(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    String csrf = Http.csrf(admin.get("/localmessage").body());
    assertThat(
            admin
                .post("/localmessage/actions/pause", "type", "payment.capture", "reason", "x")
                .statusCode())
        .isEqualTo(403);
    assertThat(
            admin
                .post(
                    "/localmessage/actions/pause",
                    "_csrf",
                    "wrong",
                    "type",
                    "payment.capture",
                    "reason",
                    "x")
                .statusCode())
        .isEqualTo(403);
    // a token in the URL ends up in access logs and proxies: refused
    HttpResponse<String> inQuery =
        admin.post(
            "/localmessage/actions/pause?_csrf=" + URLEncoder.encode(csrf, StandardCharsets.UTF_8),
            "type",
            "payment.capture",
            "reason",
            "x");
    assertThat(inQuery.statusCode()).isEqualTo(403);
    assertThat(lm.admin().paused()).isEmpty();

    HttpResponse<String> ok =
        admin.post(
            "/localmessage/actions/pause",
            "_csrf",
            csrf,
            "type",
            "payment.capture",
            "reason",
            "ok");
    assertThat(ok.statusCode()).isEqualTo(303);
    assertThat(lm.admin().paused()).containsExactly("payment.capture");
    admin.post(
        "/localmessage/actions/resume", "_csrf", csrf, "type", "payment.capture", "reason", "ok");
    assertThat(lm.admin().paused()).isEmpty();
  }

  @Test
  void loginCredentialsAreNotAcceptedFromTheQueryString() {
    Http browser = client();
    String csrf = Http.csrf(browser.get("/localmessage/login").body());
    HttpResponse<String> r =
        browser.post(
            "/localmessage/login?username="
                + ConsoleApp.ADMIN
                + "&password="
                + ConsoleApp.ADMIN_PASSWORD,
            "_csrf",
            csrf);
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(browser.get("/localmessage").statusCode()).isEqualTo(401);
  }

  @Test
  void reasonsWithLineBreaksControlOrBidiCharactersAreA400AndWriteNothing() {
    long before = audits();
    Http admin = loggedIn(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    String csrf = Http.csrf(admin.get("/localmessage").body());
    for (String reason :
        List.of(
            "ok\nevent=paused biz_type=all operator=root",
            "ok\r\nforged",
            "bell\u0007",
            "right-to-left \u202egnp.exe",
            "isolate \u2066x\u2069")) {
      HttpResponse<String> r =
          admin.post(
              "/localmessage/actions/cancel", "_csrf", csrf, "id", "" + dead, "reason", reason);
      assertThat(r.statusCode()).as(reason).isEqualTo(400);
      assertThat(r.body()).contains("reason");
    }
    assertThat(audits()).isEqualTo(before);
    assertThat(lm.admin().get(dead).orElseThrow().status()).isEqualTo(MessageStatus.DEAD);
  }

  @Test
  void aNulInTheSearchIsA400NotA500() {
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    HttpResponse<String> r = admin.get("/localmessage/search?q=door%00-1");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("U+0000");
    HttpResponse<String> type = admin.get("/localmessage/dead?type=pay%00ment");
    assertThat(type.statusCode()).isEqualTo(400);
  }

  @Test
  void theConsolesOwnIdLimitAnswersBeforeTheContainersParameterLimit() {
    long before = audits();
    Http admin = loggedIn(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    String csrf = Http.csrf(admin.get("/localmessage").body());
    List<String> form = new ArrayList<>(List.of("_csrf", csrf, "reason", "bulk"));
    for (int i = 0; i < 600; i++) {
      form.add("id");
      form.add(Long.toString(dead + 1_000_000 + i));
    }
    HttpResponse<String> r =
        admin.post("/localmessage/actions/requeue", form.toArray(String[]::new));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("at most 500 tickets at once");
    assertThat(audits()).isEqualTo(before);
  }

  /** Cancelling a ticket of an aggregate says that it releases the next one (issue 47). */
  @Test
  void theCancelOfATicketOfAnAggregateSaysItReleasesTheNextOne() {
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    HttpResponse<String> page = admin.get("/localmessage/tickets/" + dead);
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body())
        .contains("the next ticket of its aggregate starts: a purge never releases it");
  }

  @Test
  void aTicketWithMalformedHeadersShowsItsRowAndTheDecodingError() {
    long broken =
        lm.inTransaction(
                c -> lm.save(c, NewMessage.action("report.build", "broken-headers").build()))
            .id();
    Sql.update(
        sql, "UPDATE local_message SET headers = ?, status = 2 WHERE id = ?", "{\"a\":", broken);
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    HttpResponse<String> page = admin.get("/localmessage/dead?type=report.build");
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body()).contains("broken-headers");
    HttpResponse<String> ticket = admin.get("/localmessage/tickets/" + broken);
    assertThat(ticket.statusCode()).isEqualTo(200);
    assertThat(ticket.body()).contains("malformed headers");
  }

  @Test
  void hostileStoredTextIsEscapedOnEveryPage() {
    long hostile =
        lm.inTransaction(
                c ->
                    lm.save(
                        c,
                        NewMessage.action("report.build", "hostile-1")
                            .aggregateId("agg-" + HOSTILE.substring(0, 25))
                            .header("x-h", "<script>alert(1)</script>")
                            .build()))
            .id();
    Http admin = client().basic(ConsoleApp.ADMIN, ConsoleApp.ADMIN_PASSWORD);
    for (String path :
        List.of(
            "/localmessage/tickets/" + hostile,
            "/localmessage/search?q=hostile-1",
            "/localmessage/search?q=" + URLEncoder.encode(HOSTILE, StandardCharsets.UTF_8),
            "/localmessage/type?name=" + URLEncoder.encode(HOSTILE, StandardCharsets.UTF_8),
            "/localmessage/dead?type=" + URLEncoder.encode(HOSTILE, StandardCharsets.UTF_8))) {
      HttpResponse<String> r = admin.get(path);
      assertThat(r.statusCode()).as(path).isLessThan(500);
      assertThat(r.body()).as(path).doesNotContain("<script>alert(1)");
    }
  }
}
