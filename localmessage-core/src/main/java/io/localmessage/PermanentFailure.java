package io.localmessage;

/**
 * Thrown by a handler when trying again cannot help (the request was rejected, the payload is
 * invalid): the message goes DEAD at once with this message as its last error.
 */
public class PermanentFailure extends Exception {
  private static final long serialVersionUID = 1L;

  /** A permanent failure; {@code message} is recorded as the last error. */
  public PermanentFailure(String message) {
    super(message);
  }

  /** A permanent failure caused by {@code cause}; {@code message} is recorded as the last error. */
  public PermanentFailure(String message, Throwable cause) {
    super(message, cause);
  }
}
