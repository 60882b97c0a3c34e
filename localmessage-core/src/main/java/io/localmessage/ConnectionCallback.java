package io.localmessage;

import java.sql.Connection;

/** Work done in a transaction opened by {@link LocalMessages#inTransaction}. */
@FunctionalInterface
public interface ConnectionCallback<T> {
  /**
   * The work, on the transaction's connection; what it returns is returned by {@code
   * inTransaction}.
   */
  T doInTransaction(Connection connection) throws Exception;
}
