package io.localmessage.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.console.example.SecuredShopApp;
import io.localmessage.testing.TestDatabase;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The documented "console + my API + actuator" chain: enabling the console does not lock the
 * application's API; the console, actuator and the localmessage endpoint keep their own rules; the
 * console says at startup that it is on and where.
 */
@ExtendWith(OutputCaptureExtension.class)
class SecurityChainExampleTest {

  @Test
  void theApiStaysOpenWhileTheConsoleAndActuatorAreSecured(CapturedOutput output) {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
        ConfigurableApplicationContext app = start(db)) {
      String root = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
      Http anonymous = new Http(root);
      assertThat(anonymous.get("/api/orders/7").statusCode()).isEqualTo(200);
      assertThat(anonymous.postJson("/api/orders", "{}").statusCode()).isEqualTo(200);
      assertThat(anonymous.get("/actuator/health").statusCode()).isEqualTo(200);
      assertThat(anonymous.get("/actuator/localmessage").statusCode()).isEqualTo(401);
      assertThat(anonymous.get("/elsewhere").statusCode()).isIn(401, 403);
      HttpResponse<String> console = anonymous.get("/localmessage", "Accept", "text/html");
      assertThat(console.statusCode()).isEqualTo(302);
      assertThat(console.headers().firstValue("Location").orElseThrow())
          .endsWith("/localmessage/login");

      Http support = new Http(root).basic(SecuredShopApp.SUPPORT, SecuredShopApp.PASSWORD);
      assertThat(support.get("/localmessage").statusCode()).isEqualTo(200);
      assertThat(support.get("/actuator/localmessage").statusCode()).isEqualTo(403);

      Http operator = new Http(root).basic(SecuredShopApp.OPERATOR, SecuredShopApp.PASSWORD);
      assertThat(operator.get("/actuator/localmessage").statusCode()).isEqualTo(200);
      assertThat(operator.get("/actuator/metrics").statusCode()).isEqualTo(200);

      assertThat(output.getOut())
          .contains(
              "event=console_enabled url=http://127.0.0.1:"
                  + app.getEnvironment().getProperty("local.server.port")
                  + "/localmessage security=spring-security")
          .contains("action_authority=LOCALMESSAGE_ADMIN");
    }
  }

  private static ConfigurableApplicationContext start(TestDatabase db) {
    List<String> props = new ArrayList<>(List.of(Sql.datasource(db)));
    props.addAll(
        List.of(
            "server.address=127.0.0.1",
            "server.port=0",
            "management.endpoints.web.exposure.include=health,metrics,localmessage",
            "localmessage.schema.initialize=true",
            "localmessage.console.enabled=true"));
    return new SpringApplicationBuilder(SecuredShopApp.class)
        .properties(props.toArray(String[]::new))
        .run();
  }
}
