package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The transaction boundary suite on Postgres. */
class PostgresTransactionBoundaryTest extends AbstractTransactionBoundaryTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }
}
