package io.localmessage.http;

import io.localmessage.LocalMessageException;

/**
 * The request carried no usable {@code Idempotency-Key} (missing, blank or too long). Nothing was
 * applied or recorded; an HTTP endpoint answers 400, which the sender treats as permanent.
 */
public class InvalidIdempotencyKeyException extends LocalMessageException {
  private static final long serialVersionUID = 1L;

  public InvalidIdempotencyKeyException(String message) {
    super(message);
  }
}
