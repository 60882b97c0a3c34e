package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The tracing suite on MariaDb. */
class MariaDbTracingTest extends AbstractTracingTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB);
  }
}
