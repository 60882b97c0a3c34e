package io.localmessage;

/** Base of the few unchecked exceptions the library throws. */
public class LocalMessageException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** An exception with {@code message}. */
  public LocalMessageException(String message) {
    super(message);
  }

  /** An exception with {@code message}, caused by {@code cause}. */
  public LocalMessageException(String message, Throwable cause) {
    super(message, cause);
  }
}
