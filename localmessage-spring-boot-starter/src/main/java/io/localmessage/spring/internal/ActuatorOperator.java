package io.localmessage.spring.internal;

import io.localmessage.spring.OperatorRule;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.util.ClassUtils;

/**
 * The operator behind an actuator call, checked against {@link OperatorRule}: a Spring Security
 * principal by its granted authorities (so plain authorities work as in the console), any other
 * principal by the container's role check. No principal, no action: the endpoint never invents an
 * operator name.
 */
final class ActuatorOperator {
  private static final boolean SPRING_SECURITY =
      ClassUtils.isPresent(
          "org.springframework.security.core.Authentication",
          ActuatorOperator.class.getClassLoader());

  private ActuatorOperator() {}

  /** The principal's name when it may act, otherwise null. */
  static String authorized(SecurityContext security, OperatorRule rule) {
    Principal p = security == null ? null : security.getPrincipal();
    String name = p == null ? null : p.getName();
    if (name == null || name.isBlank()) {
      return null;
    }
    if (SPRING_SECURITY) {
      List<String> granted = SpringAuthorities.of(p);
      if (granted != null) {
        return rule.grants(granted) ? name : null;
      }
    }
    for (String role : rule.forms()) {
      if (security.isUserInRole(role)) {
        return name;
      }
    }
    return null;
  }

  /** Loaded only when Spring Security is on the classpath. */
  private static final class SpringAuthorities {
    static List<String> of(Principal p) {
      if (!(p instanceof org.springframework.security.core.Authentication a)) {
        return null;
      }
      if (!a.isAuthenticated()
          || a
              instanceof org.springframework.security.authentication.AnonymousAuthenticationToken) {
        return List.of();
      }
      List<String> out = new ArrayList<>();
      a.getAuthorities().forEach(g -> out.add(g.getAuthority()));
      return out;
    }
  }
}
