package io.localmessage.console.example;

import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The application's own chain, next to the console's: the console brings a chain for its path
 * (ordered first), and this one decides everything else. Without a chain of your own, adding
 * spring-boot-starter-security makes Spring Boot secure every URL, your API included.
 */
@Configuration(proxyBeanMethods = false)
public class AppSecurity {

  @Bean
  SecurityFilterChain appSecurityFilterChain(HttpSecurity http) throws Exception {
    return http.authorizeHttpRequests(
            auth ->
                auth.requestMatchers(EndpointRequest.to(HealthEndpoint.class))
                    .permitAll()
                    // actuator, the localmessage endpoint included: operations staff only
                    .requestMatchers(EndpointRequest.toAnyEndpoint())
                    .hasRole("OPS")
                    // your API keeps its own rule: permitAll, oauth2ResourceServer, ...
                    .requestMatchers("/api/**")
                    .permitAll()
                    .anyRequest()
                    .denyAll())
        .httpBasic(Customizer.withDefaults())
        // a stateless API takes no CSRF token; actuator and the console keep CSRF
        .csrf(csrf -> csrf.ignoringRequestMatchers("/api/**"))
        .build();
  }
}
