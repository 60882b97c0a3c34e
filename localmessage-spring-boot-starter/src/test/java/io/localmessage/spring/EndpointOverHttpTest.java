package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.spring.ops.OpsApplication;
import io.localmessage.testing.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.support.TransactionTemplate;

/** The {@code localmessage} actuator endpoint as an operator reaches it: over HTTP. */
class EndpointOverHttpTest {
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private String base;

  @Test
  void operationsOverHttp() throws Exception {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
        ConfigurableApplicationContext app = start(db)) {
      base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
      LocalMessages lm = app.getBean(LocalMessages.class);
      long first = saveAndAwaitDead(app, "first");
      long second = saveAndAwaitDead(app, "second");

      HttpResponse<String> stats = get("/actuator/localmessage");
      assertThat(stats.statusCode()).isEqualTo(200);
      assertThat(stats.body()).contains("\"bizType\":\"ops.fail\"").contains("\"dead\":2");

      HttpResponse<String> dead = get("/actuator/localmessage/dead?type=ops.fail&limit=1");
      assertThat(dead.statusCode()).isEqualTo(200);
      assertThat(dead.body())
          .startsWith("[{\"id\":" + first + ",")
          .doesNotContain("\"id\":" + second);
      assertThat(get("/actuator/localmessage/dead?afterId=" + first).body())
          .startsWith("[{\"id\":" + second + ",");
      HttpResponse<String> elsewhere = get("/actuator/localmessage/elsewhere");
      assertThat(elsewhere.statusCode()).isEqualTo(400);
      assertThat(elsewhere.body()).contains("'elsewhere' is neither 'dead' (the dead letters) nor");
      HttpResponse<String> one = get("/actuator/localmessage/" + first);
      assertThat(one.statusCode()).isEqualTo(200);
      assertThat(one.body()).contains("\"idemKey\":\"first\"").contains("\"audit\":[]");
      assertThat(get("/actuator/localmessage/" + (second + 1000)).statusCode()).isEqualTo(404);

      // no Spring Security here: the endpoint stays read-only, to everybody
      // a POST without a body reaches the endpoint, which says why it refuses
      HttpResponse<String> bare =
          send(
              HttpRequest.newBuilder(URI.create(base + "/actuator/localmessage/requeue/" + first))
                  .POST(HttpRequest.BodyPublishers.noBody()));
      assertThat(bare.statusCode()).isEqualTo(403);
      assertThat(bare.body()).contains("read-only");
      HttpResponse<String> requeue =
          post("/actuator/localmessage/requeue/" + first, "{\"reason\":\"remote fixed\"}");
      assertThat(requeue.statusCode()).isEqualTo(403);
      assertThat(requeue.body()).contains("localmessage.endpoint.write-enabled=true");
      assertThat(delete("/actuator/localmessage/" + second + "?reason=obsolete").statusCode())
          .isEqualTo(403);
      assertThat(
              post("/actuator/localmessage/pause/ops.fail", "{\"reason\":\"deploy\"}").statusCode())
          .isEqualTo(403);
      assertThat(lm.admin().paused()).isEmpty();
      assertThat(lm.admin().audit(first)).isEmpty();
      assertThat(lm.admin().get(second).orElseThrow().status()).isEqualTo(MessageStatus.DEAD);
      assertThat(get("/actuator/localmessage/dead?type=bad%20type!").statusCode()).isEqualTo(400);

      HttpResponse<String> health = get("/actuator/health");
      assertThat(health.body()).contains("\"localmessage\":{").contains("\"status\":\"UP\"");
    }
  }

  @Test
  void optingInToWritesWithoutSpringSecurityFailsTheStartup() throws Exception {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL)) {
      assertThatThrownBy(() -> start(db, "localmessage.endpoint.write-enabled=true").close())
          .rootCause()
          .hasMessageContaining(
              "localmessage.endpoint.write-enabled=true, but nothing would secure")
          .hasMessageContaining("Spring Security");
    }
  }

  private static ConfigurableApplicationContext start(TestDatabase db, String... more) {
    String[] props =
        Stream.of(
                Arrays.stream(Sql.datasource(db)),
                Stream.of(
                    "server.address=127.0.0.1",
                    "server.port=0",
                    "management.endpoints.web.exposure.include=health,localmessage",
                    "management.endpoint.health.show-components=always",
                    "localmessage.schema.initialize=true",
                    "localmessage.poll-interval=100ms"),
                Arrays.stream(more))
            .flatMap(x -> x)
            .toArray(String[]::new);
    return new SpringApplicationBuilder(OpsApplication.class).properties(props).run();
  }

  private static long saveAndAwaitDead(ConfigurableApplicationContext app, String key) {
    TransactionalMessages messages = app.getBean(TransactionalMessages.class);
    long id =
        app.getBean(TransactionTemplate.class)
            .execute(s -> messages.save(NewMessage.action("ops.fail", key).build()))
            .id();
    LocalMessages lm = app.getBean(LocalMessages.class);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> lm.admin().get(id).map(t -> t.status() == MessageStatus.DEAD).orElse(false));
    return id;
  }

  private HttpResponse<String> get(String path) throws Exception {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  private HttpResponse<String> post(String path, String json) throws Exception {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)));
  }

  private HttpResponse<String> delete(String path) throws Exception {
    return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE());
  }

  private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
    return http.send(
        request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
