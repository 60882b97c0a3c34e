package io.localmessage.console.internal;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Token mode's gate in front of every console URL. A request is let through when it carries the
 * token ({@code X-LocalMessage-Token: ...} or {@code Authorization: Bearer ...}; no CSRF check, a
 * browser never sends these on its own) or a valid login cookie (then every POST must carry the
 * login's CSRF value). Everything else is refused: browsers are sent to the login form, other
 * clients get 401. Only the login form and the stylesheet/script are public.
 */
public final class TokenFilter extends OncePerRequestFilter {
  private static final Logger log = LoggerFactory.getLogger(TokenFilter.class);
  static final String COOKIE = "LM_CONSOLE";
  static final String TOKEN_HEADER = "X-LocalMessage-Token";
  static final String OPERATOR_HEADER = "X-LocalMessage-Operator";

  private final String path;
  private final TokenSessions sessions;

  public TokenFilter(String path, TokenSessions sessions) {
    this.path = path;
    this.sessions = sessions;
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    String base = request.getContextPath() + path;
    String uri = request.getRequestURI();
    if (!uri.equals(base) && !uri.startsWith(base + "/")) {
      chain.doFilter(request, response);
      return;
    }
    String rest = uri.substring(base.length());
    boolean post = "POST".equals(request.getMethod());
    if (rest.equals("/console.css") || rest.equals("/console.js")) {
      chain.doFilter(request, response);
      return;
    }
    if (rest.equals("/login")) {
      if (post) {
        login(request, response, base);
      } else {
        chain.doFilter(request, response);
      }
      return;
    }

    String presented = presentedToken(request);
    if (presented != null) {
      if (!sessions.tokenMatches(presented)) {
        log.warn("event=console_token_rejected remote={} uri={}", request.getRemoteAddr(), uri);
        unauthorized(response);
        return;
      }
      String name = request.getHeader(OPERATOR_HEADER);
      request.setAttribute(
          TokenAccess.OPERATOR,
          (TokenSessions.validName(name) ? name.strip() : "api") + " (token)");
      request.setAttribute(TokenAccess.CSRF_OK, Boolean.TRUE);
      chain.doFilter(request, response);
      return;
    }

    String cookie = cookie(request);
    String name = sessions.verify(cookie);
    if (name == null) {
      if (!post && acceptsHtml(request)) {
        response.setStatus(HttpServletResponse.SC_SEE_OTHER);
        response.setHeader("Location", base + "/login");
      } else {
        unauthorized(response);
      }
      return;
    }
    request.setAttribute(TokenAccess.OPERATOR, name + " (token)");
    request.setAttribute(TokenAccess.CSRF, sessions.csrfFor(cookie));
    if (post) {
      if (!sessions.csrfMatches(cookie, request.getParameter(TokenAccess.CSRF_PARAMETER))) {
        log.warn("event=console_csrf_rejected remote={} uri={}", request.getRemoteAddr(), uri);
        response.sendError(HttpServletResponse.SC_FORBIDDEN, "CSRF token missing or wrong");
        return;
      }
      request.setAttribute(TokenAccess.CSRF_OK, Boolean.TRUE);
      if (rest.equals("/logout")) {
        setCookie(request, response, base, "", 0);
        response.setStatus(HttpServletResponse.SC_SEE_OTHER);
        response.setHeader("Location", base + "/login?logout");
        return;
      }
    }
    chain.doFilter(request, response);
  }

  private void login(HttpServletRequest request, HttpServletResponse response, String base) {
    String name = request.getParameter("operator");
    if (!sessions.tokenMatches(request.getParameter("token")) || !TokenSessions.validName(name)) {
      log.warn("event=console_login_failed remote={}", request.getRemoteAddr());
      response.setStatus(HttpServletResponse.SC_SEE_OTHER);
      response.setHeader("Location", base + "/login?error");
      return;
    }
    String value = sessions.issue(name);
    setCookie(request, response, base, value, (int) sessions.lifetime().toSeconds());
    log.info("event=console_login operator={} remote={}", name.strip(), request.getRemoteAddr());
    response.setStatus(HttpServletResponse.SC_SEE_OTHER);
    response.setHeader("Location", base);
  }

  private static void setCookie(
      HttpServletRequest request,
      HttpServletResponse response,
      String base,
      String value,
      int maxAge) {
    Cookie c = new Cookie(COOKIE, value);
    c.setPath(base);
    c.setHttpOnly(true);
    c.setSecure(request.isSecure());
    c.setMaxAge(maxAge);
    c.setAttribute("SameSite", "Strict");
    response.addCookie(c);
  }

  private static String presentedToken(HttpServletRequest request) {
    String h = request.getHeader(TOKEN_HEADER);
    if (h != null) {
      return h.strip();
    }
    String auth = request.getHeader("Authorization");
    if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return auth.substring(7).strip();
    }
    return null;
  }

  private static String cookie(HttpServletRequest request) {
    Cookie[] cookies = request.getCookies();
    if (cookies == null) {
      return null;
    }
    for (Cookie c : cookies) {
      if (COOKIE.equals(c.getName())) {
        return c.getValue();
      }
    }
    return null;
  }

  private static boolean acceptsHtml(HttpServletRequest request) {
    String accept = request.getHeader("Accept");
    return accept != null && accept.contains("text/html");
  }

  private static void unauthorized(HttpServletResponse response) throws IOException {
    response.setHeader("WWW-Authenticate", "Bearer realm=\"localmessage console\"");
    response.sendError(HttpServletResponse.SC_UNAUTHORIZED, "console token required");
  }
}
