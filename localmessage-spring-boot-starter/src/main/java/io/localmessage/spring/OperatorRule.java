package io.localmessage.spring;

import java.util.Collection;
import java.util.Set;

/**
 * Who may run an operator action (requeue, cancel, pause, resume), whatever the door: an
 * authenticated principal holding the action authority, in its plain or its {@code ROLE_} form. The
 * web console and the actuator endpoint both ask this one rule, configured by {@value
 * #AUTHORITY_PROPERTY}.
 */
public final class OperatorRule {
  /** The property naming the authority; the console's, so one setting covers every door. */
  public static final String AUTHORITY_PROPERTY = "localmessage.console.action-authority";

  /** The authority operator actions need unless {@value #AUTHORITY_PROPERTY} names another. */
  public static final String DEFAULT_AUTHORITY = "LOCALMESSAGE_ADMIN";

  private final Set<String> forms;

  /**
   * The rule of {@code authority} (plain, like {@code LOCALMESSAGE_ADMIN}, or as a role, {@code
   * ROLE_LOCALMESSAGE_ADMIN}: both forms are accepted either way).
   *
   * @throws IllegalArgumentException when {@code authority} is blank
   */
  public OperatorRule(String authority) {
    if (authority == null || authority.isBlank()) {
      throw new IllegalArgumentException(
          AUTHORITY_PROPERTY + " must not be blank: operator actions always need one");
    }
    this.forms = forms(authority.strip());
  }

  /** The authority itself and its {@code ROLE_} form, so both authorities and roles work. */
  public static Set<String> forms(String authority) {
    return authority.startsWith("ROLE_")
        ? Set.of(authority, authority.substring(5))
        : Set.of(authority, "ROLE_" + authority);
  }

  /** Both forms of the authority. */
  public Set<String> forms() {
    return forms;
  }

  /** Whether a principal holding {@code authorities} may act. */
  public boolean grants(Collection<String> authorities) {
    for (String a : authorities) {
      if (a != null && forms.contains(a)) {
        return true;
      }
    }
    return false;
  }
}
