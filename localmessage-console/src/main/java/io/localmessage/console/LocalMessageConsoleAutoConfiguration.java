package io.localmessage.console;

import io.localmessage.LocalMessages;
import io.localmessage.console.internal.ActivityRecorder;
import io.localmessage.console.internal.ConsoleAccess;
import io.localmessage.console.internal.ConsoleAnnouncer;
import io.localmessage.console.internal.ConsoleRoutes;
import io.localmessage.console.internal.ConsoleSecurityConfiguration;
import io.localmessage.console.internal.ConsoleTokenConfiguration;
import io.localmessage.spring.LocalMessageAutoConfiguration;
import io.localmessage.spring.LocalMessagesBuilderCustomizer;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The web console under {@code localmessage.console.path} (default {@code /localmessage}), in a
 * servlet web application with the auto-configured engine. Off unless {@code
 * localmessage.console.enabled=true}. Secured by Spring Security when the application has it
 * (authentication for everything, an authority for actions, CSRF on), otherwise by the required
 * {@code localmessage.console.token}; startup fails when neither is there.
 *
 * <p>Ordered after Spring Boot's web security auto-configuration so that the console's own filter
 * chain does not make Boot's default chain back off: the rest of the application stays as secured
 * as it was.
 */
@AutoConfiguration(
    after = LocalMessageAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration"
    })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({LocalMessages.class, RouterFunction.class})
@ConditionalOnBooleanProperty(name = "localmessage.console.enabled")
@ConditionalOnBean(LocalMessages.class)
@EnableConfigurationProperties(ConsoleProperties.class)
@Import({ConsoleSecurityConfiguration.class, ConsoleTokenConfiguration.class})
public final class LocalMessageConsoleAutoConfiguration {

  @Bean
  ActivityRecorder localMessageConsoleActivity(ConsoleProperties props) {
    return new ActivityRecorder(Clock.systemUTC(), props.getChartMinutes());
  }

  /**
   * Installs the chart's delivery listener, next to any listener an application customizer adds
   * (the builder keeps them all).
   */
  @Bean
  @Order(Ordered.HIGHEST_PRECEDENCE)
  LocalMessagesBuilderCustomizer localMessageConsoleActivityListener(
      ActivityRecorder localMessageConsoleActivity) {
    return b -> {
      b.listener(localMessageConsoleActivity);
      localMessageConsoleActivity.markInstalled();
    };
  }

  @Bean
  ConsoleAnnouncer localMessageConsoleAnnouncer(ConsoleProperties props, ConsoleAccess access) {
    return new ConsoleAnnouncer(props, access);
  }

  @Bean
  RouterFunction<ServerResponse> localMessageConsoleRoutes(
      LocalMessages localMessages,
      ConsoleProperties props,
      ConsoleAccess access,
      ObjectProvider<PayloadRedactor> redactor,
      ActivityRecorder localMessageConsoleActivity) {
    return new ConsoleRoutes(
            localMessages,
            props,
            access,
            redactor.getIfAvailable(() -> PayloadRedactor.NONE),
            localMessageConsoleActivity)
        .routes();
  }
}
