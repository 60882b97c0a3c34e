package io.localmessage.console.internal;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Who is asking and what they may do, checked by every console handler in addition to the filter in
 * front of it (Spring Security's chain or the token filter): if the application's own security lets
 * a console request through unauthenticated, the console still refuses it.
 */
public interface ConsoleAccess {

  /** The authenticated operator's name as it goes to the audit trail, or null. */
  String operator(HttpServletRequest request);

  boolean mayView(HttpServletRequest request);

  boolean mayAct(HttpServletRequest request);

  /** The hidden field POST forms must carry, or null when none is needed. */
  CsrfField csrf(HttpServletRequest request);

  /** Whether this POST passed a CSRF check (or needs none, e.g. a token sent as a header). */
  boolean csrfVerified(HttpServletRequest request);

  /** Where the login form posts its fields, and what they are called. */
  LoginForm loginForm();

  /** A hidden form field carrying a CSRF token. */
  record CsrfField(String name, String value) {}

  /** The console's login form: {@code user} and {@code secret} are the field names. */
  record LoginForm(String user, String userLabel, String secret, String secretLabel) {}
}
