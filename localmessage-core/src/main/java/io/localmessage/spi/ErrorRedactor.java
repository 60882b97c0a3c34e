package io.localmessage.spi;

/**
 * Cleans an error summary before it is stored as {@code last_error} or logged: strip card numbers,
 * tokens, personal data. The result is then truncated to 1,024 characters. The default removes
 * nothing.
 */
@FunctionalInterface
public interface ErrorRedactor {
  ErrorRedactor NONE = s -> s;

  String redact(String error);
}
