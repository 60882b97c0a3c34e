package io.localmessage.spring.ops;

import io.localmessage.Message;
import io.localmessage.PermanentFailure;
import io.localmessage.spring.LocalMessageHandler;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.stereotype.Component;

/** A web application with actuator, for the endpoint over HTTP; no JPA, no Flyway. */
@SpringBootConfiguration
@EnableAutoConfiguration(
    excludeName = {
      "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
      "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
      "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration"
    })
public class OpsApplication {

  @Component
  static class Rejecting {
    @LocalMessageHandler("ops.fail")
    void handle(Message m) throws PermanentFailure {
      throw new PermanentFailure("rejected");
    }
  }
}
