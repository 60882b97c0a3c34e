package io.localmessage.console.tokenmode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.console.Http;
import io.localmessage.console.Sql;
import io.localmessage.testing.TestDatabase;
import java.net.URLEncoder;
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
 * The console in token mode as a door: anonymous and token holders (token mode has no viewer role:
 * whoever has the token is an operator), CSRF for cookie logins, logout that holds on every
 * replica, throttled wrong tokens, secrets only from the body or headers, paths matched after
 * normalization, hostile input. Two replicas share one database.
 */
class TokenModeSecurityTest {
  private static final String[] CONSOLE = {
    "localmessage.console.enabled=true", "localmessage.console.token=" + TokenModeApp.TOKEN
  };
  private static TestDatabase db;
  private static ConfigurableApplicationContext a;
  private static ConfigurableApplicationContext b;
  private static LocalMessages lm;
  private static DataSource sql;
  private static long dead;

  @BeforeAll
  static void start() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
    a = TokenModeApp.start(db, CONSOLE);
    b = TokenModeApp.start(db, CONSOLE);
    lm = a.getBean(LocalMessages.class);
    sql = db.dataSource(2);
    dead =
        lm.inTransaction(c -> lm.save(c, NewMessage.action("invoice.send", "tk-1").build())).id();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> lm.admin().get(dead).orElseThrow().status() == MessageStatus.DEAD);
  }

  @AfterAll
  static void stop() {
    for (ConfigurableApplicationContext c : new ConfigurableApplicationContext[] {a, b}) {
      if (c != null) {
        c.close();
      }
    }
    if (db != null) {
      db.close();
    }
  }

  private static String root(ConfigurableApplicationContext app) {
    return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
  }

  private static String cookieOf(HttpResponse<String> login) {
    String set = login.headers().firstValue("Set-Cookie").orElseThrow();
    return set.substring(0, set.indexOf(';'));
  }

  private static HttpResponse<String> login(Http http, String operator) {
    HttpResponse<String> r =
        http.post("/localmessage/login", "operator", operator, "token", TokenModeApp.TOKEN);
    assertThat(r.headers().firstValue("Location").orElseThrow()).isEqualTo("/localmessage");
    return r;
  }

  private static long audits() {
    return Sql.count(sql, "SELECT COUNT(*) FROM local_message_audit");
  }

  @Test
  void anonymousSeesNothingAndChangesNothing() {
    long before = audits();
    Http anonymous = new Http(root(a));
    for (String page : List.of("/localmessage", "/localmessage/dead", "/localmessage/tickets/1")) {
      assertThat(anonymous.get(page).statusCode()).as(page).isEqualTo(401);
    }
    for (String action : List.of("requeue", "cancel", "pause", "resume", "requeue-all")) {
      assertThat(
              anonymous
                  .post(
                      "/localmessage/actions/" + action,
                      "id",
                      "" + dead,
                      "type",
                      "invoice.send",
                      "reason",
                      "x")
                  .statusCode())
          .as(action)
          .isEqualTo(401);
    }
    assertThat(audits()).isEqualTo(before);
  }

  @Test
  void logoutRevokesTheCookieOnEveryReplica() {
    Http alice = new Http(root(a));
    String cookie = cookieOf(login(alice, "alice"));
    String csrf = Http.csrf(alice.get("/localmessage/tickets/" + dead).body());
    // a copy of the cookie, used against the other replica
    Http thief = new Http(root(b)).header("Cookie", cookie);
    assertThat(thief.get("/localmessage/dead").statusCode()).isEqualTo(200);

    assertThat(alice.post("/localmessage/logout", "_csrf", csrf).statusCode()).isEqualTo(303);
    assertThat(thief.get("/localmessage/dead").statusCode()).isEqualTo(401);
    assertThat(
            thief
                .post(
                    "/localmessage/actions/pause",
                    "_csrf",
                    csrf,
                    "type",
                    "invoice.send",
                    "reason",
                    "after logout")
                .statusCode())
        .isEqualTo(401);
    assertThat(new Http(root(a)).header("Cookie", cookie).get("/localmessage").statusCode())
        .isEqualTo(401);
    assertThat(lm.admin().paused()).isEmpty();

    // a new login is a new session, not the revoked one
    Http again = new Http(root(a));
    String fresh = cookieOf(login(again, "alice"));
    assertThat(fresh).isNotEqualTo(cookie);
    assertThat(new Http(root(b)).header("Cookie", fresh).get("/localmessage").statusCode())
        .isEqualTo(200);
  }

  @Test
  void twoLoginsInTheSameSecondAreTwoSessions() {
    String one = cookieOf(login(new Http(root(a)), "carol"));
    String two = cookieOf(login(new Http(root(a)), "carol"));
    assertThat(one).isNotEqualTo(two);
  }

  @Test
  void theTokenAndTheCsrfValueAreNotAcceptedFromTheQueryString() {
    Http http = new Http(root(a));
    HttpResponse<String> inQuery =
        http.post(
            "/localmessage/login?token="
                + URLEncoder.encode(TokenModeApp.TOKEN, StandardCharsets.UTF_8),
            "operator",
            "mallory");
    assertThat(inQuery.headers().firstValue("Location").orElseThrow())
        .isEqualTo("/localmessage/login?error");
    assertThat(inQuery.headers().firstValue("Set-Cookie")).isEmpty();

    Http dave = new Http(root(a));
    login(dave, "dave");
    String csrf = Http.csrf(dave.get("/localmessage/tickets/" + dead).body());
    HttpResponse<String> csrfInQuery =
        dave.post(
            "/localmessage/actions/pause?_csrf=" + URLEncoder.encode(csrf, StandardCharsets.UTF_8),
            "type",
            "invoice.send",
            "reason",
            "x");
    assertThat(csrfInQuery.statusCode()).isEqualTo(403);
    assertThat(lm.admin().paused()).isEmpty();
  }

  @Test
  void theFilterMatchesTheNormalizedPath() {
    for (String sneaky :
        List.of("/localmessage;x=1/dead", "/%6Cocalmessage/dead", "/localmessage/./dead")) {
      HttpResponse<String> browser = new Http(root(a)).get(sneaky, "Accept", "text/html");
      assertThat(browser.statusCode()).as(sneaky).isEqualTo(303);
      assertThat(browser.headers().firstValue("Location").orElseThrow())
          .isEqualTo("/localmessage/login");
      HttpResponse<String> script = new Http(root(a)).get(sneaky);
      assertThat(script.statusCode()).as(sneaky).isEqualTo(401);
      assertThat(script.headers().firstValue("WWW-Authenticate")).as(sneaky).isPresent();
    }
  }

  @Test
  void wrongTokensAreThrottledPerAddressWithABoundedDelay() {
    Http guesser = new Http(root(b));
    long slowest = 0;
    for (int i = 0; i < 6; i++) {
      long t0 = System.nanoTime();
      HttpResponse<String> r =
          guesser.post(
              "/localmessage/login", "operator", "eve", "token", "guess-" + i + "-xxxxxxxxxx");
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(r.headers().firstValue("Location").orElse(""))
          .isIn("/localmessage/login?error", "");
      slowest = Math.max(slowest, ms);
    }
    assertThat(slowest).as("the sixth wrong token waits").isGreaterThanOrEqualTo(400);
    assertThat(slowest).as("but never long").isLessThan(6_000);
    // the right token still works from that address (after its bounded wait)
    Http ok = new Http(root(b));
    login(ok, "erin");
    assertThat(ok.get("/localmessage").statusCode()).isEqualTo(200);
  }

  @Test
  void hostileOperatorNamesAndReasonsAreRefused() {
    for (String name : List.of("eve\u202e", "eve\u2066x", "eve\u001b[2J")) {
      HttpResponse<String> r =
          new Http(root(a))
              .post("/localmessage/login", "operator", name, "token", TokenModeApp.TOKEN);
      assertThat(r.headers().firstValue("Location").orElseThrow())
          .as(name)
          .isEqualTo("/localmessage/login?error");
    }
    long before = audits();
    Http bot =
        new Http(root(a))
            .header("X-LocalMessage-Token", TokenModeApp.TOKEN)
            .header("X-LocalMessage-Operator", "bot");
    HttpResponse<String> r =
        bot.post("/localmessage/actions/cancel", "id", "" + dead, "reason", "ok\nforged=1");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(audits()).isEqualTo(before);
  }

  @Test
  void theActuatorEndpointIsReadOnlyWithoutSpringSecurity() {
    try (ConfigurableApplicationContext exposed =
        TokenModeApp.start(db, "management.endpoints.web.exposure.include=health,localmessage")) {
      Http anonymous = new Http(root(exposed));
      HttpResponse<String> r =
          anonymous.postJson("/actuator/localmessage/pause/invoice.send", "{\"reason\":\"x\"}");
      assertThat(r.statusCode()).isIn(403, 404, 405);
      assertThat(lm.admin().paused()).isEmpty();
    }
    assertThatThrownBy(
            () ->
                TokenModeApp.start(
                    db,
                    "management.endpoints.web.exposure.include=health,localmessage",
                    "localmessage.endpoint.write-enabled=true"))
        .rootCause()
        .hasMessageContaining("localmessage.endpoint.write-enabled=true")
        .hasMessageContaining("Spring Security");
  }
}
