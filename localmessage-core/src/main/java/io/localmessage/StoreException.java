package io.localmessage;

/** The message store (the database) failed a statement; the cause carries the SQL error. */
public class StoreException extends LocalMessageException {
  private static final long serialVersionUID = 1L;

  /**
   * A failed statement: {@code message} says what was being done, {@code cause} is the SQL error.
   */
  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
