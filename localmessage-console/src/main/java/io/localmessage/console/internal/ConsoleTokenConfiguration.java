package io.localmessage.console.internal;

import io.localmessage.console.ConsoleProperties;
import io.localmessage.spring.LocalMessageProperties;
import java.time.Clock;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * Without Spring Security: the token filter in front of the console. Startup fails when no token is
 * configured, so an enabled console is never open. Not API.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(WebSecurityAbsent.class)
public final class ConsoleTokenConfiguration {

  @Bean
  TokenSessions localMessageConsoleTokenSessions(ConsoleProperties props) {
    String token = props.getToken();
    if (token == null || token.isBlank()) {
      throw new ConsoleNotProtectedException(
          "localmessage.console.enabled=true, but nothing would protect the console: add Spring"
              + " Security to the application (spring-boot-starter-security), or set"
              + " localmessage.console.token to a secret of at least "
              + ConsoleProperties.MIN_TOKEN_LENGTH
              + " characters");
    }
    if (token.strip().length() < ConsoleProperties.MIN_TOKEN_LENGTH) {
      throw new ConsoleNotProtectedException(
          "localmessage.console.token must be at least "
              + ConsoleProperties.MIN_TOKEN_LENGTH
              + " characters, was "
              + token.strip().length());
    }
    return new TokenSessions(token.strip(), props.getTokenSession(), Clock.systemUTC());
  }

  @Bean
  @ConditionalOnMissingBean
  ConsoleAccess localMessageConsoleAccess() {
    return new TokenAccess();
  }

  /** Logouts, shared by every replica through the engine's control table. */
  @Bean
  TokenRevocations localMessageConsoleTokenRevocations(
      DataSource dataSource, LocalMessageProperties engine) {
    return new TokenRevocations(dataSource, engine.getTable() + "_control", Clock.systemUTC());
  }

  @Bean
  FilterRegistrationBean<TokenFilter> localMessageConsoleTokenFilter(
      ConsoleProperties props,
      TokenSessions localMessageConsoleTokenSessions,
      TokenRevocations localMessageConsoleTokenRevocations) {
    FilterRegistrationBean<TokenFilter> r =
        new FilterRegistrationBean<>(
            new TokenFilter(
                props.getPath(),
                localMessageConsoleTokenSessions,
                localMessageConsoleTokenRevocations,
                new TokenThrottle(Clock.systemUTC())));
    r.addUrlPatterns(props.getPath(), props.getPath() + "/*");
    r.setOrder(Ordered.HIGHEST_PRECEDENCE + 100);
    r.setName("localMessageConsoleTokenFilter");
    return r;
  }
}
