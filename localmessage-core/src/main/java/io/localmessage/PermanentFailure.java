package io.localmessage;

/**
 * Thrown by a handler when trying again cannot help (the request was rejected, the payload is
 * invalid): the ticket goes DEAD at once with this message as its last error.
 */
public class PermanentFailure extends Exception {
  private static final long serialVersionUID = 1L;

  public PermanentFailure(String message) {
    super(message);
  }

  public PermanentFailure(String message, Throwable cause) {
    super(message, cause);
  }
}
