package io.localmessage.console.internal;

import io.localmessage.console.ConsoleProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.UsernamePasswordAuthenticationFilter;

/**
 * With Spring Security: a filter chain for the console's path only, ahead of the application's
 * chains. Every console request must be authenticated (the console's login form, HTTP Basic, or a
 * session the application's own login created); actions need the action authority; CSRF is on, with
 * the token taken from the form body or a header, never from the query string. Replace it by
 * declaring a bean named {@value #CHAIN}. Not API.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({SecurityFilterChain.class, HttpSecurity.class})
public final class ConsoleSecurityConfiguration {
  public static final String CHAIN = "localMessageConsoleSecurityFilterChain";
  private static final Logger log = LoggerFactory.getLogger(ConsoleSecurityConfiguration.class);

  @Bean
  @ConditionalOnMissingBean
  ConsoleAccess localMessageConsoleAccess(ConsoleProperties props) {
    if (props.getToken() != null && !props.getToken().isBlank()) {
      log.warn(
          "event=console_token_ignored reason=spring_security_secures_the_console"
              + " property=localmessage.console.token");
    }
    return new SpringSecurityAccess(props.getActionAuthority(), props.getViewAuthority());
  }

  @Bean(name = CHAIN)
  @ConditionalOnMissingBean(name = CHAIN)
  @Order(Ordered.HIGHEST_PRECEDENCE + 100)
  SecurityFilterChain localMessageConsoleSecurityFilterChain(
      HttpSecurity http, ConsoleProperties props) throws Exception {
    String p = props.getPath();
    String[] act = SpringSecurityAccess.authorities(props.getActionAuthority());
    String view = props.getViewAuthority();
    http.securityMatcher(p, p + "/**")
        .authorizeHttpRequests(
            a -> {
              a.requestMatchers(HttpMethod.GET, p + "/login", p + "/console.css", p + "/console.js")
                  .permitAll();
              a.requestMatchers(HttpMethod.POST, p + "/actions/**").hasAnyAuthority(act);
              if (view.isEmpty()) {
                a.anyRequest().authenticated();
              } else {
                String[] both = concat(SpringSecurityAccess.authorities(view), act);
                a.anyRequest().hasAnyAuthority(both);
              }
            })
        .formLogin(
            f ->
                f.loginPage(p + "/login")
                    .loginProcessingUrl(p + "/login")
                    .defaultSuccessUrl(p, false)
                    .failureUrl(p + "/login?error")
                    .permitAll())
        .httpBasic(Customizer.withDefaults())
        .addFilterBefore(
            new QueryCredentialsFilter(p + "/login"), UsernamePasswordAuthenticationFilter.class)
        .logout(l -> l.logoutUrl(p + "/logout").logoutSuccessUrl(p + "/login?logout"))
        .csrf(c -> c.csrfTokenRequestHandler(new BodyOnlyCsrfHandler()));
    return http.build();
  }

  private static String[] concat(String[] a, String[] b) {
    String[] all = new String[a.length + b.length];
    System.arraycopy(a, 0, all, 0, a.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }
}
