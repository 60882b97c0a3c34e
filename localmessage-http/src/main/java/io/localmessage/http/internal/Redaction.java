package io.localmessage.http.internal;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.regex.Pattern;

/**
 * Turns the start of a response body into a short, single-line, redacted excerpt fit for {@code
 * last_error} and logs: configured secret values (the static header values) and common secret
 * shapes (bearer tokens, password/token/secret fields, card-like digit runs) are masked. Not API.
 */
public final class Redaction {
  static final String MASK = "****";

  private static final Pattern SECRET_FIELD =
      Pattern.compile(
          "(?i)(\"?(?:password|passwd|pwd|secret|client_secret|token|access_token|refresh_token"
              + "|id_token|api[_-]?key|authorization|cookie|set-cookie)\"?\\s*[:=]\\s*)"
              + "(\"[^\"]*\"|[^\\s,;&}\"]+)");
  private static final Pattern BEARER =
      Pattern.compile("(?i)\\b(bearer|basic)\\s+[A-Za-z0-9._~+/=\\-]{4,}");
  private static final Pattern CARD_LIKE = Pattern.compile("\\b\\d(?:[ -]?\\d){12,18}\\b");
  private static final Pattern CONTROL = Pattern.compile("[\\p{Cntrl}\\s]+");

  private Redaction() {}

  /**
   * An excerpt of at most {@code maxChars} characters (plus "..." when cut), or "" when {@code
   * maxChars} is 0 or there is no body.
   */
  public static String excerpt(
      byte[] prefix, boolean cut, int maxChars, Collection<String> secrets) {
    if (maxChars <= 0 || prefix.length == 0) {
      return "";
    }
    // redact the whole captured prefix before cutting, so a cut cannot split a secret in two
    String text = redact(new String(prefix, StandardCharsets.UTF_8), secrets);
    text = CONTROL.matcher(text).replaceAll(" ").trim();
    if (text.length() > maxChars) {
      return text.substring(0, maxChars) + "...";
    }
    return cut ? text + "..." : text;
  }

  /** Masks {@code secrets} and the common secret shapes in {@code text}. */
  public static String redact(String text, Collection<String> secrets) {
    String t = text;
    for (String s : secrets) {
      if (s != null && s.length() >= 4) {
        t = t.replace(s, MASK);
      }
    }
    t = BEARER.matcher(t).replaceAll("$1 " + MASK);
    t = SECRET_FIELD.matcher(t).replaceAll("$1\"" + MASK + "\"");
    t = CARD_LIKE.matcher(t).replaceAll(MASK);
    return t;
  }

  /** {@code scheme://host:port/path} of {@code uri}: never user info, query or fragment. */
  public static String safeUrl(java.net.URI uri) {
    StringBuilder b = new StringBuilder();
    if (uri.getScheme() != null) {
      b.append(uri.getScheme()).append("://");
    }
    if (uri.getHost() != null) {
      b.append(uri.getHost());
    }
    if (uri.getPort() >= 0) {
      b.append(':').append(uri.getPort());
    }
    if (uri.getRawPath() != null) {
      b.append(uri.getRawPath());
    }
    return b.toString();
  }
}
