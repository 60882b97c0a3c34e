package io.localmessage.spring;

import io.localmessage.LocalMessages;
import io.localmessage.spring.internal.LocalMessageEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The actuator endpoint {@code localmessage} (stats, dead letters, requeue, cancel, pause, resume).
 * Created only when the application exposes it, e.g. {@code
 * management.endpoints.web.exposure.include=health,localmessage}: actuator exposes nothing but
 * health by default. Secure it like any actuator endpoint.
 */
@AutoConfiguration(after = LocalMessageAutoConfiguration.class)
@ConditionalOnClass(ConditionalOnAvailableEndpoint.class)
@ConditionalOnBean(LocalMessages.class)
public final class LocalMessageEndpointAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint
  public LocalMessageEndpoint localMessageEndpoint(LocalMessages localMessages) {
    return new LocalMessageEndpoint(localMessages);
  }
}
