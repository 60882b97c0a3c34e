package io.localmessage.console.example;

import io.localmessage.Message;
import io.localmessage.spring.LocalMessageHandler;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * An application with its own API, actuator and the console, secured by {@link AppSecurity}: an
 * operator (console actions, actuator) and a support user (console read-only).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(AppSecurity.class)
public class SecuredShopApp {
  public static final String OPERATOR = "olga";
  public static final String SUPPORT = "sam";
  public static final String PASSWORD = "secret-password";

  @Bean
  UserDetailsService users() {
    return new InMemoryUserDetailsManager(
        User.withUsername(OPERATOR)
            .password("{noop}" + PASSWORD)
            .roles("OPS", "LOCALMESSAGE_ADMIN")
            .build(),
        User.withUsername(SUPPORT).password("{noop}" + PASSWORD).roles("SUPPORT").build());
  }

  @Bean
  RouterFunction<ServerResponse> api() {
    return RouterFunctions.route()
        .GET("/api/orders/{id}", r -> ServerResponse.ok().body("order " + r.pathVariable("id")))
        .POST("/api/orders", r -> ServerResponse.ok().body("placed"))
        .build();
  }

  @Bean
  Handlers handlers() {
    return new Handlers();
  }

  static class Handlers {
    @LocalMessageHandler("points.add")
    void add(Message m) {}
  }
}
