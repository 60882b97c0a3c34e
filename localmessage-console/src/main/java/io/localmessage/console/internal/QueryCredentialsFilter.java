package io.localmessage.console.internal;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Refuses a login POST whose query string carries the user name or password: URLs end up in access
 * logs and proxies, so the console's login reads credentials from the form body only.
 */
final class QueryCredentialsFilter extends OncePerRequestFilter {
  private final String loginPath;

  QueryCredentialsFilter(String loginPath) {
    this.loginPath = loginPath;
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    if ("POST".equals(request.getMethod())
        && loginPath.equals(request.getServletPath() + nonNull(request.getPathInfo()))
        && (TokenFilter.inQuery(request, "username") || TokenFilter.inQuery(request, "password"))) {
      response.sendError(
          HttpServletResponse.SC_BAD_REQUEST, "credentials are accepted in the form body only");
      return;
    }
    chain.doFilter(request, response);
  }

  private static String nonNull(String s) {
    return s == null ? "" : s;
  }
}
