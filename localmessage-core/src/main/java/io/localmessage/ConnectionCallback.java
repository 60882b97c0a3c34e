package io.localmessage;

import java.sql.Connection;

/** Work done in a transaction opened by {@link LocalMessages#inTransaction}. */
@FunctionalInterface
public interface ConnectionCallback<T> {
  T doInTransaction(Connection connection) throws Exception;
}
