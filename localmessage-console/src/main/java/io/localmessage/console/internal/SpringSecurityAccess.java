package io.localmessage.console.internal;

import io.localmessage.spring.OperatorRule;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Set;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.web.csrf.CsrfToken;

/** Access decided by Spring Security's authentication; CSRF by its {@code CsrfFilter}. */
public final class SpringSecurityAccess implements ConsoleAccess {
  private final Set<String> action;
  private final Set<String> view;

  /**
   * @param actionAuthority needed for actions, with or without {@code ROLE_}
   * @param viewAuthority needed to view; blank: any authenticated user
   */
  public SpringSecurityAccess(String actionAuthority, String viewAuthority) {
    this.action = forms(actionAuthority);
    this.view = viewAuthority == null || viewAuthority.isBlank() ? Set.of() : forms(viewAuthority);
  }

  /** The authority itself and its {@code ROLE_} form, so both authorities and roles work. */
  static Set<String> forms(String authority) {
    return OperatorRule.forms(authority);
  }

  /** Both forms of the authority, for the filter chain's rules. */
  public static String[] authorities(String authority) {
    return forms(authority).toArray(String[]::new);
  }

  @Override
  public String operator(HttpServletRequest request) {
    Authentication a = authenticated();
    return a == null ? null : a.getName();
  }

  @Override
  public boolean mayView(HttpServletRequest request) {
    Authentication a = authenticated();
    return a != null && (view.isEmpty() || has(a, view) || has(a, action));
  }

  @Override
  public boolean mayAct(HttpServletRequest request) {
    Authentication a = authenticated();
    return a != null && has(a, action);
  }

  @Override
  public CsrfField csrf(HttpServletRequest request) {
    Object t = request.getAttribute(CsrfToken.class.getName());
    return t instanceof CsrfToken token
        ? new CsrfField(token.getParameterName(), token.getToken())
        : null;
  }

  /**
   * Spring Security's {@code CsrfFilter} exposes the token on every request it checks; its absence
   * on a POST means CSRF protection was switched off for this path, and the console then refuses to
   * act.
   */
  @Override
  public boolean csrfVerified(HttpServletRequest request) {
    return request.getAttribute(CsrfToken.class.getName()) != null;
  }

  @Override
  public LoginForm loginForm() {
    return new LoginForm("username", "User", "password", "Password");
  }

  private static Authentication authenticated() {
    Authentication a = SecurityContextHolder.getContext().getAuthentication();
    if (a == null || !a.isAuthenticated() || a instanceof AnonymousAuthenticationToken) {
      return null;
    }
    String name = a.getName();
    return name == null || name.isBlank() ? null : a;
  }

  private static boolean has(Authentication a, Set<String> wanted) {
    for (GrantedAuthority g : a.getAuthorities()) {
      if (g.getAuthority() != null && wanted.contains(g.getAuthority())) {
        return true;
      }
    }
    return false;
  }
}
