package io.localmessage.spi;

/**
 * Cleans an error summary before it is stored as {@code last_error} or logged: strip card numbers,
 * tokens, personal data. The result is then truncated to 1,024 characters. The default removes
 * nothing.
 */
@FunctionalInterface
public interface ErrorRedactor {
  /** Keeps every error as it is. */
  ErrorRedactor NONE = s -> s;

  /** The error summary to store instead of {@code error}; {@code null} stores an empty one. */
  String redact(String error);
}
