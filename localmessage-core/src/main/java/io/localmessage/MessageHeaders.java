package io.localmessage;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The encoding of a message's headers in the {@code headers} column: a flat JSON object of string
 * values, e.g. {@code {"content-type":"application/json"}}. Integrations that store headers next to
 * the library's own tables (the Kafka module's dead table) use it so every table reads the same
 * way. Only what {@link #encode} writes is read back.
 */
public final class MessageHeaders {
  private MessageHeaders() {}

  /** {@code {"a":"b"}}; an empty map is {@code {}}. */
  public static String encode(Map<String, String> headers) {
    StringBuilder sb = new StringBuilder().append('{');
    boolean first = true;
    for (Map.Entry<String, String> e : headers.entrySet()) {
      if (!first) {
        sb.append(',');
      }
      first = false;
      quote(sb, e.getKey());
      sb.append(':');
      quote(sb, e.getValue());
    }
    return sb.append('}').toString();
  }

  /**
   * The headers for display: a row whose stored headers cannot be decoded shows one entry naming
   * the decoding error instead of failing the whole listing it is part of.
   */
  public static Map<String, String> decodeForView(String json) {
    try {
      return decode(json);
    } catch (RuntimeException e) {
      return Map.of("(unreadable)", "malformed headers, not decoded: " + e.getMessage());
    }
  }

  /**
   * Parses what {@link #encode} wrote; {@code null}, blank or {@code {}} is an empty map.
   *
   * @throws IllegalArgumentException when {@code json} is not such an object
   */
  public static Map<String, String> decode(String json) {
    if (json == null || json.isBlank() || json.equals("{}")) {
      return Collections.emptyMap();
    }
    Parser p = new Parser(json);
    Map<String, String> out = new LinkedHashMap<>();
    p.skipWs();
    p.expect('{');
    p.skipWs();
    if (p.peek() == '}') {
      return Collections.emptyMap();
    }
    while (true) {
      p.skipWs();
      String key = p.string();
      p.skipWs();
      p.expect(':');
      p.skipWs();
      out.put(key, p.string());
      p.skipWs();
      char c = p.next();
      if (c == '}') {
        return Collections.unmodifiableMap(out);
      }
      if (c != ',') {
        throw new IllegalArgumentException("malformed headers JSON at " + p.pos + ": " + json);
      }
    }
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }

  private static final class Parser {
    private final String s;
    private int pos;

    Parser(String s) {
      this.s = s;
    }

    char peek() {
      if (pos >= s.length()) {
        throw new IllegalArgumentException("truncated headers JSON: " + s);
      }
      return s.charAt(pos);
    }

    char next() {
      char c = peek();
      pos++;
      return c;
    }

    void expect(char c) {
      if (next() != c) {
        throw new IllegalArgumentException("expected '" + c + "' at " + (pos - 1) + ": " + s);
      }
    }

    void skipWs() {
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
        pos++;
      }
    }

    String string() {
      expect('"');
      StringBuilder sb = new StringBuilder();
      while (true) {
        char c = next();
        if (c == '"') {
          return sb.toString();
        }
        if (c != '\\') {
          sb.append(c);
          continue;
        }
        char e = next();
        switch (e) {
          case 'n' -> sb.append('\n');
          case 'r' -> sb.append('\r');
          case 't' -> sb.append('\t');
          case 'b' -> sb.append('\b');
          case 'f' -> sb.append('\f');
          case 'u' -> {
            sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            pos += 4;
          }
          default -> sb.append(e);
        }
      }
    }
  }
}
