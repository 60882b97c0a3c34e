package io.localmessage.console.internal;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Access in token mode, as established by {@link TokenFilter}: whoever presents the token may view
 * and act. The operator name is the one typed at login (or sent as {@code
 * X-LocalMessage-Operator}), marked {@code (token)} in the audit trail because no identity provider
 * vouches for it.
 */
public final class TokenAccess implements ConsoleAccess {
  static final String OPERATOR = TokenAccess.class.getName() + ".operator";
  static final String CSRF = TokenAccess.class.getName() + ".csrf";
  static final String CSRF_OK = TokenAccess.class.getName() + ".csrfOk";
  public static final String CSRF_PARAMETER = "_csrf";

  @Override
  public String operator(HttpServletRequest request) {
    return request.getAttribute(OPERATOR) instanceof String s ? s : null;
  }

  @Override
  public boolean mayView(HttpServletRequest request) {
    return operator(request) != null;
  }

  @Override
  public boolean mayAct(HttpServletRequest request) {
    return operator(request) != null;
  }

  @Override
  public CsrfField csrf(HttpServletRequest request) {
    return request.getAttribute(CSRF) instanceof String s ? new CsrfField(CSRF_PARAMETER, s) : null;
  }

  @Override
  public boolean csrfVerified(HttpServletRequest request) {
    return Boolean.TRUE.equals(request.getAttribute(CSRF_OK));
  }

  @Override
  public LoginForm loginForm() {
    return new LoginForm("operator", "Your name", "token", "Console token");
  }
}
