package io.localmessage.console.internal;

import io.localmessage.Printable;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Token mode's gate in front of every console URL. A request is let through when it carries the
 * token ({@code X-LocalMessage-Token: ...} or {@code Authorization: Bearer ...}; no CSRF check, a
 * browser never sends these on its own) or a valid, unrevoked login cookie (then every POST must
 * carry the login's CSRF value in its body). Everything else is refused: browsers are sent to the
 * login form, other clients get 401. Only the login form and the stylesheet/script are public.
 *
 * <p>Secrets are read from headers and form bodies only, never from the query string (which ends up
 * in access logs). Paths are matched both as sent and as the container normalized them, so {@code
 * ;params}, percent-encoding or dot segments cannot walk around the gate. Wrong tokens are
 * throttled per client address and logged.
 */
public final class TokenFilter extends OncePerRequestFilter {
  private static final Logger log = LoggerFactory.getLogger(TokenFilter.class);
  static final String COOKIE = "LM_CONSOLE";
  static final String TOKEN_HEADER = "X-LocalMessage-Token";
  static final String OPERATOR_HEADER = "X-LocalMessage-Operator";

  private final String path;
  private final TokenSessions sessions;
  private final TokenRevocations revocations;
  private final TokenThrottle throttle;

  public TokenFilter(
      String path, TokenSessions sessions, TokenRevocations revocations, TokenThrottle throttle) {
    this.path = path;
    this.sessions = sessions;
    this.revocations = revocations;
    this.throttle = throttle;
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    String base = request.getContextPath() + path;
    String rest = rest(request);
    if (rest == null) {
      chain.doFilter(request, response);
      return;
    }
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
      if (!checkToken(request, response, presented)) {
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
    TokenSessions.Session session = sessions.session(cookie);
    if (session != null && revocations.isRevoked(session)) {
      session = null;
    }
    if (session == null) {
      if (!post && acceptsHtml(request)) {
        response.setStatus(HttpServletResponse.SC_SEE_OTHER);
        response.setHeader("Location", base + "/login");
      } else {
        unauthorized(response);
      }
      return;
    }
    request.setAttribute(TokenAccess.OPERATOR, session.name() + " (token)");
    request.setAttribute(TokenAccess.CSRF, sessions.csrfFor(cookie));
    if (post) {
      String csrf =
          inQuery(request, TokenAccess.CSRF_PARAMETER)
              ? null
              : request.getParameter(TokenAccess.CSRF_PARAMETER);
      if (!sessions.csrfMatches(cookie, csrf)) {
        log.warn(
            "event=console_csrf_rejected remote={} uri={}",
            request.getRemoteAddr(),
            Printable.escape(request.getRequestURI()));
        response.sendError(HttpServletResponse.SC_FORBIDDEN, "CSRF token missing or wrong");
        return;
      }
      request.setAttribute(TokenAccess.CSRF_OK, Boolean.TRUE);
      if (rest.equals("/logout")) {
        revocations.revoke(session);
        log.info(
            "event=console_logout operator={} remote={}",
            Printable.escape(session.name()),
            request.getRemoteAddr());
        setCookie(request, response, base, "", 0);
        response.setStatus(HttpServletResponse.SC_SEE_OTHER);
        response.setHeader("Location", base + "/login?logout");
        return;
      }
    }
    chain.doFilter(request, response);
  }

  /**
   * The part of the console path after its base ({@code ""} for the base itself), taken from the
   * container's normalized path, falling back to the raw URI; null when the request is not for the
   * console.
   */
  private String rest(HttpServletRequest request) {
    String normalized =
        request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
    String rest = after(normalized, path);
    if (rest != null) {
      return rest;
    }
    return after(request.getRequestURI(), request.getContextPath() + path);
  }

  private static String after(String uri, String base) {
    if (uri.equals(base)) {
      return "";
    }
    return uri.startsWith(base + "/") ? uri.substring(base.length()) : null;
  }

  /** Checks a presented token after the throttle's wait; counts and logs a wrong one. */
  private boolean checkToken(
      HttpServletRequest request, HttpServletResponse response, String presented) {
    String remote = request.getRemoteAddr();
    Duration delay = throttle.delayFor(remote);
    if (!throttle.await(delay)) {
      log.warn("event=console_token_throttled remote={}", remote);
      return false;
    }
    if (sessions.tokenMatches(presented)) {
      throttle.succeeded(remote);
      return true;
    }
    int failures = throttle.failed(remote);
    log.warn(
        "event=console_token_rejected remote={} uri={} failures={} delayed_ms={}",
        remote,
        Printable.escape(request.getRequestURI()),
        failures,
        delay.toMillis());
    return false;
  }

  private void login(HttpServletRequest request, HttpServletResponse response, String base) {
    String name = request.getParameter("operator");
    if (inQuery(request, "token") || inQuery(request, "operator")) {
      log.warn(
          "event=console_login_refused remote={} why=credentials_in_query_string",
          request.getRemoteAddr());
      failedLogin(response, base);
      return;
    }
    String token = request.getParameter("token");
    if (token == null || !checkToken(request, response, token) || !TokenSessions.validName(name)) {
      log.warn(
          "event=console_login_failed remote={} operator={}",
          request.getRemoteAddr(),
          Printable.escape(name));
      failedLogin(response, base);
      return;
    }
    // a new session id at every login: whatever cookie the browser held before is not reused
    String value = sessions.issue(name);
    setCookie(request, response, base, value, (int) sessions.lifetime().toSeconds());
    log.info(
        "event=console_login operator={} remote={}",
        Printable.escape(name.strip()),
        request.getRemoteAddr());
    response.setStatus(HttpServletResponse.SC_SEE_OTHER);
    response.setHeader("Location", base);
  }

  private static void failedLogin(HttpServletResponse response, String base) {
    response.setStatus(HttpServletResponse.SC_SEE_OTHER);
    response.setHeader("Location", base + "/login?error");
  }

  /** Whether the query string names parameter {@code name} (whatever the body holds). */
  static boolean inQuery(HttpServletRequest request, String name) {
    String q = request.getQueryString();
    if (q == null || q.isEmpty()) {
      return false;
    }
    for (String pair : q.split("&")) {
      int eq = pair.indexOf('=');
      String raw = eq < 0 ? pair : pair.substring(0, eq);
      try {
        if (name.equals(URLDecoder.decode(raw, StandardCharsets.UTF_8))) {
          return true;
        }
      } catch (IllegalArgumentException e) {
        return true; // undecodable: treat as suspicious
      }
    }
    return false;
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
