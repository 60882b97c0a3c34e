package io.localmessage.console.app;

import io.localmessage.Message;
import io.localmessage.PermanentFailure;
import io.localmessage.console.PayloadRedactor;
import io.localmessage.spring.LocalMessageHandler;
import io.localmessage.testing.TestDatabase;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * A web application with Spring Security (two in-memory users), the starter and the console: the
 * biz type {@code payment.capture} fails permanently until {@link #heal} is set; {@code mail.send}
 * always succeeds; {@code report.build} has no handler here. Its own page {@code /hello} is left to
 * Boot's default security.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ConsoleApp {
  public static final String ADMIN = "alice";
  public static final String ADMIN_PASSWORD = "alice-password";
  public static final String VIEWER = "victor";
  public static final String VIEWER_PASSWORD = "victor-password";

  /** Whether the payment handler now succeeds. */
  public static final AtomicBoolean heal = new AtomicBoolean();

  @Bean
  UserDetailsService users() {
    return new InMemoryUserDetailsManager(
        User.withUsername(ADMIN)
            .password("{noop}" + ADMIN_PASSWORD)
            .roles("LOCALMESSAGE_ADMIN")
            .build(),
        User.withUsername(VIEWER).password("{noop}" + VIEWER_PASSWORD).roles("SUPPORT").build());
  }

  /** Masks the card number in payment payloads. */
  @Bean
  PayloadRedactor cardMask() {
    return (ticket, text) -> text.replaceAll("\"card\":\"\\d+(\\d{4})\"", "\"card\":\"****$1\"");
  }

  @Bean
  RouterFunction<ServerResponse> hello() {
    return RouterFunctions.route().GET("/hello", r -> ServerResponse.ok().body("hello")).build();
  }

  @Bean
  Handlers handlers() {
    return new Handlers();
  }

  static class Handlers {
    @LocalMessageHandler("payment.capture")
    void capture(Message m) throws PermanentFailure {
      if (!heal.get()) {
        throw new PermanentFailure("gateway said: card declined (code 05)");
      }
    }

    @LocalMessageHandler("mail.send")
    void mail(Message m) {}
  }

  /** Starts the application on a random port of 127.0.0.1 with the console enabled. */
  public static ConfigurableApplicationContext start(TestDatabase db, String... more) {
    heal.set(false);
    java.util.List<String> props =
        new java.util.ArrayList<>(java.util.List.of(io.localmessage.console.Sql.datasource(db)));
    props.addAll(
        java.util.List.of(
            "server.address=127.0.0.1",
            "server.port=0",
            "localmessage.schema.initialize=true",
            "localmessage.poll-interval=100ms",
            "localmessage.shutdown-timeout=2s",
            "localmessage.types[payment.capture].retain-succeeded=1h",
            "localmessage.types[mail.send].retain-succeeded=1h",
            "localmessage.console.enabled=true"));
    props.addAll(java.util.List.of(more));
    return new SpringApplicationBuilder(ConsoleApp.class)
        .properties(props.toArray(String[]::new))
        .run();
  }
}
