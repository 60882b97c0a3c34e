package io.localmessage.console.tokenmode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.admin.AuditEntry;
import io.localmessage.console.Http;
import io.localmessage.testing.TestDatabase;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

/** The console in an application without Spring Security: a configured token is the only way in. */
class TokenModeTest {
  private static TestDatabase db;

  @BeforeAll
  static void database() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }

  @AfterAll
  static void drop() {
    if (db != null) {
      db.close();
    }
  }

  @Test
  void springSecurityIsReallyAbsentHere() {
    assertThat(ClassUtils.isPresent("org.springframework.security.web.SecurityFilterChain", null))
        .isFalse();
  }

  @Test
  void theConsoleIsOffUnlessEnabled() {
    try (ConfigurableApplicationContext app = TokenModeApp.start(db)) {
      Http http = new Http(root(app));
      assertThat(http.get("/localmessage", "Accept", "text/html").statusCode()).isEqualTo(404);
      assertThat(http.get("/localmessage/login").statusCode()).isEqualTo(404);
      assertThat(app.getBeanNamesForType(io.localmessage.console.internal.ConsoleAccess.class))
          .isEmpty();
    }
  }

  @Test
  void enabledWithoutATokenFailsTheStartup() {
    assertThatThrownBy(() -> TokenModeApp.start(db, "localmessage.console.enabled=true"))
        .rootCause()
        .hasMessageContaining(
            "localmessage.console.enabled=true, but nothing would protect the console")
        .hasMessageContaining("localmessage.console.token");
    assertThatThrownBy(
            () ->
                TokenModeApp.start(
                    db, "localmessage.console.enabled=true", "localmessage.console.token=short"))
        .rootCause()
        .hasMessageContaining("localmessage.console.token must be at least 16 characters, was 5");
  }

  @Test
  void theTokenLetsOperatorsInAndNobodyElse() {
    try (ConfigurableApplicationContext app =
        TokenModeApp.start(
            db,
            "localmessage.console.enabled=true",
            "localmessage.console.path=/ops/messages",
            "localmessage.console.token=" + TokenModeApp.TOKEN)) {
      LocalMessages lm = app.getBean(LocalMessages.class);
      long id =
          lm.inTransaction(c -> lm.save(c, NewMessage.action("invoice.send", "inv-1").build()))
              .id();
      long other =
          lm.inTransaction(c -> lm.save(c, NewMessage.action("invoice.send", "inv-2").build()))
              .id();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> lm.admin().listDead("invoice.send", 0, 10).size() == 2);
      String root = root(app);

      // nobody without the token
      HttpResponse<String> browser = new Http(root).get("/ops/messages", "Accept", "text/html");
      assertThat(browser.statusCode()).isEqualTo(303);
      assertThat(browser.headers().firstValue("Location").orElseThrow())
          .isEqualTo("/ops/messages/login");
      assertThat(new Http(root).get("/ops/messages/dead").statusCode()).isEqualTo(401);
      assertThat(
              new Http(root)
                  .header("X-LocalMessage-Token", TokenModeApp.TOKEN + "x")
                  .get("/ops/messages")
                  .statusCode())
          .isEqualTo(401);
      assertThat(
              new Http(root)
                  .header("Authorization", "Bearer wrong-token-wrong-token")
                  .post("/ops/messages/actions/requeue", "id", "" + id, "reason", "x")
                  .statusCode())
          .isEqualTo(401);
      assertThat(lm.admin().get(id).orElseThrow().status()).isEqualTo(MessageStatus.DEAD);

      // scripts: the token as a header, no CSRF needed (a browser never sends it on its own)
      Http bot =
          new Http(root)
              .header("X-LocalMessage-Token", TokenModeApp.TOKEN)
              .header("X-LocalMessage-Operator", "ops-bot");
      HttpResponse<String> page = bot.get("/ops/messages/dead?type=invoice.send");
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.body()).contains("mailbox full").contains("ops-bot (token)");
      HttpResponse<String> requeue =
          bot.post("/ops/messages/actions/cancel", "id", "" + id, "reason", "customer left");
      assertThat(requeue.statusCode()).isEqualTo(303);
      assertThat(lm.admin().audit(id))
          .extracting(AuditEntry::action, AuditEntry::operator, AuditEntry::reason)
          .containsExactly(Tuple.tuple("CANCEL", "ops-bot (token)", "customer left"));

      // people: the login form, then a signed cookie and CSRF-protected forms
      Http person = new Http(root);
      HttpResponse<String> wrong =
          person.post("/ops/messages/login", "operator", "mallory", "token", "guess-guess-guess");
      assertThat(wrong.statusCode()).isEqualTo(303);
      assertThat(wrong.headers().firstValue("Location").orElseThrow())
          .isEqualTo("/ops/messages/login?error");
      assertThat(wrong.headers().firstValue("Set-Cookie")).isEmpty();
      assertThat(person.get("/ops/messages").statusCode()).isEqualTo(401);

      HttpResponse<String> login =
          person.post("/ops/messages/login", "operator", "alice", "token", TokenModeApp.TOKEN);
      assertThat(login.statusCode()).isEqualTo(303);
      assertThat(login.headers().firstValue("Set-Cookie").orElseThrow())
          .startsWith("LM_CONSOLE=")
          .contains("Path=/ops/messages")
          .contains("HttpOnly")
          .contains("SameSite=Strict");
      HttpResponse<String> ticket = person.get("/ops/messages/tickets/" + other);
      assertThat(ticket.statusCode()).isEqualTo(200);
      assertThat(ticket.body()).contains("alice (token)").contains("requeue-form");

      HttpResponse<String> noCsrf =
          person.post("/ops/messages/actions/requeue", "id", "" + other, "reason", "retry");
      assertThat(noCsrf.statusCode()).isEqualTo(403);
      HttpResponse<String> badCsrf =
          person.post(
              "/ops/messages/actions/requeue",
              "_csrf",
              "forged",
              "id",
              "" + other,
              "reason",
              "retry");
      assertThat(badCsrf.statusCode()).isEqualTo(403);
      assertThat(lm.admin().audit(other)).isEmpty();

      String csrf = Http.csrf(ticket.body());
      HttpResponse<String> ok =
          person.post(
              "/ops/messages/actions/requeue",
              "_csrf",
              csrf,
              "id",
              "" + other,
              "reason",
              "mailbox emptied");
      assertThat(ok.statusCode()).isEqualTo(303);
      assertThat(ok.headers().firstValue("Location").orElseThrow())
          .isEqualTo("/ops/messages/tickets/" + other + "?done=requeued&n=1");
      assertThat(lm.admin().audit(other))
          .extracting(AuditEntry::action, AuditEntry::operator, AuditEntry::reason)
          .containsExactly(Tuple.tuple("REQUEUE", "alice (token)", "mailbox emptied"));

      HttpResponse<String> logout = person.post("/ops/messages/logout", "_csrf", csrf);
      assertThat(logout.statusCode()).isEqualTo(303);
      assertThat(person.get("/ops/messages").statusCode()).isEqualTo(401);
    }
  }

  private static String root(ConfigurableApplicationContext app) {
    return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
  }
}
