package io.localmessage.console.internal;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * HTML building with escaping by default: every dynamic value goes through {@link #esc}; values in
 * URLs through {@link #q}. Appending to a {@link StringBuilder} keeps pages allocation-light.
 */
public final class Html {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'").withZone(ZoneOffset.UTC);

  private final StringBuilder out = new StringBuilder(8192);

  /** Escapes text for element content and double- or single-quoted attribute values. */
  public static String esc(Object value) {
    if (value == null) {
      return "";
    }
    String s = value.toString();
    StringBuilder b = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      String r =
          switch (c) {
            case '&' -> "&amp;";
            case '<' -> "&lt;";
            case '>' -> "&gt;";
            case '"' -> "&quot;";
            case '\'' -> "&#39;";
            default -> null;
          };
      if (r == null && c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
        r = "\uFFFD"; // control characters are not valid in HTML text
      }
      if (r != null) {
        if (b == null) {
          b = new StringBuilder(s.length() + 16).append(s, 0, i);
        }
        b.append(r);
      } else if (b != null) {
        b.append(c);
      }
    }
    return b == null ? s : b.toString();
  }

  /** Encodes a query parameter value. */
  public static String q(Object value) {
    return URLEncoder.encode(value == null ? "" : value.toString(), StandardCharsets.UTF_8);
  }

  /** A short human age: {@code 45s}, {@code 3m 12s}, {@code 2h 5m}, {@code 4d 3h}; zero: a dash. */
  public static String age(Duration d) {
    if (d == null || d.isZero() || d.isNegative()) {
      return "–";
    }
    long s = d.getSeconds();
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return (s / 60) + "m " + (s % 60) + "s";
    }
    if (s < 86_400) {
      return (s / 3600) + "h " + (s % 3600 / 60) + "m";
    }
    return (s / 86_400) + "d " + (s % 86_400 / 3600) + "h";
  }

  /** A UTC time, to the second. */
  public static String time(Instant t) {
    return t == null ? "–" : TIME.format(t);
  }

  /** Appends trusted markup (literals written in this package). */
  public Html raw(String markup) {
    out.append(markup);
    return this;
  }

  /** Appends escaped text. */
  public Html text(Object value) {
    out.append(esc(value));
    return this;
  }

  /** Appends {@code <tag>escaped text</tag>}; the tag may carry trusted attributes. */
  public Html el(String tag, Object value) {
    int space = tag.indexOf(' ');
    String name = space < 0 ? tag : tag.substring(0, space);
    out.append('<')
        .append(tag)
        .append('>')
        .append(esc(value))
        .append("</")
        .append(name)
        .append('>');
    return this;
  }

  /** Appends {@code name="escaped value"} preceded by a space. */
  public Html attr(String name, Object value) {
    out.append(' ').append(name).append("=\"").append(esc(value)).append('"');
    return this;
  }

  /** Appends a link with escaped href and text. */
  public Html link(String href, Object text) {
    out.append("<a href=\"").append(esc(href)).append("\">").append(esc(text)).append("</a>");
    return this;
  }

  /** Appends a hidden form field. */
  public Html hidden(String name, Object value) {
    out.append("<input type=\"hidden\"");
    attr("name", name);
    attr("value", value);
    out.append('>');
    return this;
  }

  @Override
  public String toString() {
    return out.toString();
  }
}
