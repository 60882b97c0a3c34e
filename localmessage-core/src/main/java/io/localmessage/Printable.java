package io.localmessage;

/**
 * Text that reaches a person: an operator's terminal, a log line, an audit entry. Control
 * characters (a line break forges a log line, an escape sequence drives a terminal) and the
 * bidirectional overrides and isolates (which make a text display in another order than it reads)
 * are refused where people type them and escaped where stored or received text is shown.
 */
public final class Printable {
  private Printable() {}

  /** Whether {@code c} is U+202A..U+202E or U+2066..U+2069, the overrides and isolates. */
  public static boolean isBidiControl(int c) {
    return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
  }

  /** Whether {@code c} must not reach a person as it is. */
  public static boolean isUnsafe(int c) {
    return Character.isISOControl(c) || isBidiControl(c);
  }

  /**
   * Why {@code text} may not be an operator name or a reason, or {@code null} when it may: names
   * the first control or bidirectional character and where it is.
   */
  public static String unprintable(String text) {
    for (int i = 0; i < text.length(); ) {
      int c = text.codePointAt(i);
      if (isUnsafe(c)) {
        return String.format(
            "contains the %s character U+%04X at index %d",
            isBidiControl(c) ? "bidirectional control" : "control", c, i);
      }
      i += Character.charCount(c);
    }
    return null;
  }

  /**
   * {@code text} with every control and bidirectional character written as {@code \}{@code uXXXX},
   * so it stays on one line and displays in the order it reads. {@code null} stays {@code null}.
   */
  public static String escape(String text) {
    if (text == null) {
      return null;
    }
    StringBuilder sb = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (isUnsafe(c)) {
        if (sb == null) {
          sb = new StringBuilder(text.length() + 16).append(text, 0, i);
        }
        sb.append(String.format("\\u%04x", (int) c));
      } else if (sb != null) {
        sb.append(c);
      }
    }
    return sb == null ? text : sb.toString();
  }
}
