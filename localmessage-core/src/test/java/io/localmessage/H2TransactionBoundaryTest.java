package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The transaction boundary suite on H2. */
class H2TransactionBoundaryTest extends AbstractTransactionBoundaryTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }
}
