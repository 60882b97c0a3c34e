package io.localmessage;

/**
 * {@code save} was called on a connection in autocommit mode. A message saved outside the business
 * transaction could survive a rolled-back business change (or be lost after a committed one), so
 * the library refuses and writes nothing.
 */
public class TransactionRequiredException extends LocalMessageException {
  private static final long serialVersionUID = 1L;

  /** The refusal, with {@code message} saying what to do instead. */
  public TransactionRequiredException(String message) {
    super(message);
  }
}
