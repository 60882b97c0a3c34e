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
      // answered here, not through the error page, which the application may secure differently
      response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
      response.setContentType("text/plain;charset=UTF-8");
      response.getWriter().write("credentials are accepted in the form body only\n");
      return;
    }
    chain.doFilter(request, response);
  }

  private static String nonNull(String s) {
    return s == null ? "" : s;
  }
}
