package io.localmessage;

/**
 * The database will not commit (or did not commit) a transaction the library opened around the
 * caller's work, although the work returned normally: a statement of the work failed and the error
 * was caught, and the database had already rolled the transaction back or marked it failed
 * (PostgreSQL after any error, every database after a deadlock or serialization failure), or the
 * work tried to end the library's transaction itself. Nothing of the work was committed; the
 * library rolled back and reports it instead of a commit that did not happen.
 *
 * <p>To go on after an expected error inside the work, run the statement under a savepoint ({@code
 * Savepoint sp = c.setSavepoint(); try { ... } catch (SQLException e) { c.rollback(sp); }}) or
 * avoid the error ({@code INSERT ... ON CONFLICT DO NOTHING}, {@code ... ON DUPLICATE KEY UPDATE}).
 */
public class TransactionAbortedException extends StoreException {
  private static final long serialVersionUID = 1L;

  /** {@code message} says what the work did; {@code cause} is the error that aborted it. */
  public TransactionAbortedException(String message, Throwable cause) {
    super(message, cause);
  }
}
