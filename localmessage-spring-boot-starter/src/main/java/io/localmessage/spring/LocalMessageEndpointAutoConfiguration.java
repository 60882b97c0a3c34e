package io.localmessage.spring;

import io.localmessage.LocalMessages;
import io.localmessage.spring.internal.EndpointNotProtectedException;
import io.localmessage.spring.internal.LocalMessageEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The actuator endpoint {@code localmessage} (stats, dead letters, requeue, cancel, pause, resume).
 * Created only when the application exposes it, e.g. {@code
 * management.endpoints.web.exposure.include=health,localmessage}: actuator exposes nothing but
 * health by default.
 *
 * <p>Read-only unless {@code localmessage.endpoint.write-enabled=true}. That opt-in needs Spring
 * Security in the application (startup fails without it), and every action then needs an
 * authenticated user holding the authority in {@code localmessage.console.action-authority}
 * (default {@code LOCALMESSAGE_ADMIN}): the same rule as the web console's.
 */
@AutoConfiguration(after = LocalMessageAutoConfiguration.class)
@ConditionalOnClass(ConditionalOnAvailableEndpoint.class)
@ConditionalOnBean(LocalMessages.class)
public final class LocalMessageEndpointAutoConfiguration {
  /** Opts in to the endpoint's write operations. */
  public static final String WRITE_ENABLED = "localmessage.endpoint.write-enabled";

  private static final String WEB_SECURITY = "org.springframework.security.web.SecurityFilterChain";

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint
  public LocalMessageEndpoint localMessageEndpoint(LocalMessages localMessages, Environment env) {
    boolean write = env.getProperty(WRITE_ENABLED, Boolean.class, false);
    if (write && !ClassUtils.isPresent(WEB_SECURITY, getClass().getClassLoader())) {
      throw new EndpointNotProtectedException(
          WRITE_ENABLED
              + "=true, but nothing would secure the endpoint's operator actions: they need"
              + " Spring Security (spring-boot-starter-security) to know who is acting");
    }
    String authority =
        env.getProperty(OperatorRule.AUTHORITY_PROPERTY, OperatorRule.DEFAULT_AUTHORITY);
    return new LocalMessageEndpoint(localMessages, new OperatorRule(authority), write);
  }
}
