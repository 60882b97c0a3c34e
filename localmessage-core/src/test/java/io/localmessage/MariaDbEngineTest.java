package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The conformance suite on MariaDB, sessions in a non-UTC zone. */
class MariaDbEngineTest extends AbstractEngineConformanceTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }
}
