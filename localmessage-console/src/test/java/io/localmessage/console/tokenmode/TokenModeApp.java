package io.localmessage.console.tokenmode;

import io.localmessage.Message;
import io.localmessage.PermanentFailure;
import io.localmessage.console.Sql;
import io.localmessage.spring.LocalMessageHandler;
import io.localmessage.testing.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A web application without Spring Security on its classpath (this package runs in its own surefire
 * execution that leaves Spring Security out): the console must rely on its token.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TokenModeApp {
  static final String TOKEN = "s3cret-console-token-for-tests";

  @Bean
  Rejecting rejecting() {
    return new Rejecting();
  }

  static class Rejecting {
    @LocalMessageHandler("invoice.send")
    void send(Message m) throws PermanentFailure {
      throw new PermanentFailure("mailbox full");
    }
  }

  static ConfigurableApplicationContext start(TestDatabase db, String... more) {
    List<String> props = new ArrayList<>(List.of(Sql.datasource(db)));
    props.addAll(
        List.of(
            "server.address=127.0.0.1",
            "server.port=0",
            "localmessage.schema.initialize=true",
            "localmessage.poll-interval=100ms",
            "localmessage.shutdown-timeout=2s"));
    props.addAll(List.of(more));
    return new SpringApplicationBuilder(TokenModeApp.class)
        .properties(props.toArray(String[]::new))
        .run();
  }
}
