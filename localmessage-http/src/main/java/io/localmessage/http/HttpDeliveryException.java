package io.localmessage.http;

/**
 * A delivery that may succeed when tried again: a retryable status without a usable {@code
 * Retry-After}, a timeout or an I/O error. The engine retries it with the type's backoff. The
 * message names the status and the target (never the payload or header values).
 */
public class HttpDeliveryException extends Exception {
  private static final long serialVersionUID = 1L;

  private final int status;

  public HttpDeliveryException(int status, String message) {
    super(message);
    this.status = status;
  }

  public HttpDeliveryException(String message, Throwable cause) {
    super(message, cause);
    this.status = 0;
  }

  /** The HTTP status, or 0 when no response arrived (timeout, connection failure). */
  public int status() {
    return status;
  }
}
