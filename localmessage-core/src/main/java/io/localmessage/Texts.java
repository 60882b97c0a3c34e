package io.localmessage;

/**
 * Makes any text safe to store: every text the engine itself writes (last errors, audit reasons)
 * passes through {@link #sanitize}, so a byte the database refuses can never make a write-back or
 * an operator action fail. PostgreSQL rejects U+0000 in text; a lone surrogate cannot be encoded in
 * UTF-8 and some drivers fail on it.
 */
public final class Texts {
  private Texts() {}

  /**
   * {@code text} without U+0000, with every lone surrogate replaced by U+FFFD, and at most {@code
   * max} characters long (cut with {@code ...}, never inside a surrogate pair). {@code null} stays
   * {@code null}.
   */
  public static String sanitize(String text, int max) {
    if (text == null) {
      return null;
    }
    StringBuilder sb = null;
    int n = text.length();
    for (int i = 0; i < n; i++) {
      char c = text.charAt(i);
      String replacement = null;
      if (c == '\u0000') {
        replacement = "";
      } else if (Character.isHighSurrogate(c)) {
        if (i + 1 < n && Character.isLowSurrogate(text.charAt(i + 1))) {
          if (sb != null) {
            sb.append(c).append(text.charAt(i + 1));
          }
          i++;
          continue;
        }
        replacement = "\uFFFD";
      } else if (Character.isLowSurrogate(c)) {
        replacement = "\uFFFD";
      }
      if (replacement != null) {
        if (sb == null) {
          sb = new StringBuilder(n).append(text, 0, i);
        }
        sb.append(replacement);
      } else if (sb != null) {
        sb.append(c);
      }
    }
    String clean = sb == null ? text : sb.toString();
    return cap(clean, max);
  }

  /** At most {@code max} characters, ending in {@code ...} when cut; never splits a pair. */
  static String cap(String text, int max) {
    if (text.length() <= max) {
      return text;
    }
    int end = Math.max(0, max - 3);
    if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1))) {
      end--;
    }
    return text.substring(0, end) + "...";
  }

  /**
   * Why {@code text} cannot be stored as a key or name, or {@code null} when it can: U+0000 and
   * lone surrogates are refused before any SQL runs (PostgreSQL would abort the caller's
   * transaction on the first).
   */
  public static String unstorable(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\u0000') {
        return "contains the character U+0000 at index " + i;
      }
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
          i++;
          continue;
        }
        return "contains a lone surrogate at index " + i;
      }
      if (Character.isLowSurrogate(c)) {
        return "contains a lone surrogate at index " + i;
      }
    }
    return null;
  }
}
