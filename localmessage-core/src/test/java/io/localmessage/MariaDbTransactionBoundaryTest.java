package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The transaction boundary suite on MariaDb. */
class MariaDbTransactionBoundaryTest extends AbstractTransactionBoundaryTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB);
  }
}
