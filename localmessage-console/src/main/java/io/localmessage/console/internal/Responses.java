package io.localmessage.console.internal;

import java.nio.charset.StandardCharsets;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/** Reading console requests and writing console responses with their security headers. */
final class Responses {
  private static final MediaType HTML = new MediaType("text", "html", StandardCharsets.UTF_8);
  private static final String CSP =
      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self';"
          + " form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

  private Responses() {}

  /** A parameter without surrounding blanks; null when absent or blank. */
  static String param(ServerRequest request, String name) {
    return request.param(name).map(String::strip).filter(s -> !s.isEmpty()).orElse(null);
  }

  static String required(ServerRequest request, String name) {
    String v = param(request, name);
    if (v == null) {
      throw new IllegalArgumentException("'" + name + "' is required");
    }
    return v;
  }

  static long longParam(ServerRequest request, String name, long fallback) {
    String v = param(request, name);
    if (v == null) {
      return fallback;
    }
    try {
      long n = Long.parseLong(v);
      if (n < 0) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a non-negative number, was '" + v + "'");
    }
  }

  static ServerResponse problem(int status, View v, String title, String message) {
    return html(status, Layout.problem(v, title, message));
  }

  static ServerResponse html(int status, String body) {
    return ServerResponse.status(status).contentType(HTML).headers(Responses::secure).body(body);
  }

  static ServerResponse asset(String body, MediaType type) {
    return ServerResponse.ok()
        .contentType(type)
        .header("X-Content-Type-Options", "nosniff")
        .header(HttpHeaders.CACHE_CONTROL, "max-age=300")
        .body(body);
  }

  private static void secure(HttpHeaders h) {
    h.set("Content-Security-Policy", CSP);
    h.set("X-Content-Type-Options", "nosniff");
    h.set("X-Frame-Options", "DENY");
    h.set("Referrer-Policy", "no-referrer");
    h.setCacheControl("no-store");
  }
}
