package io.localmessage.console.internal;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.function.Supplier;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.security.web.csrf.CsrfTokenRequestHandler;
import org.springframework.security.web.csrf.XorCsrfTokenRequestAttributeHandler;

/**
 * Spring Security's default CSRF handling, except that a token in the query string does not count:
 * URLs end up in access logs, proxies and browser history. Forms send it in the body, scripts in
 * the {@code X-CSRF-TOKEN} header.
 */
final class BodyOnlyCsrfHandler implements CsrfTokenRequestHandler {
  private final XorCsrfTokenRequestAttributeHandler delegate =
      new XorCsrfTokenRequestAttributeHandler();

  @Override
  public void handle(
      HttpServletRequest request, HttpServletResponse response, Supplier<CsrfToken> csrfToken) {
    delegate.handle(request, response, csrfToken);
  }

  @Override
  public String resolveCsrfTokenValue(HttpServletRequest request, CsrfToken csrfToken) {
    if (TokenFilter.inQuery(request, csrfToken.getParameterName())) {
      return null;
    }
    return delegate.resolveCsrfTokenValue(request, csrfToken);
  }
}
