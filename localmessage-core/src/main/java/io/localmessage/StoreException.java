package io.localmessage;

/** The message store (the database) failed a statement; the cause carries the SQL error. */
public class StoreException extends LocalMessageException {
  private static final long serialVersionUID = 1L;

  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
