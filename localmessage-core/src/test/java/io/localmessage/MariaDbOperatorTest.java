package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** Bad input and operator actions on MariaDB, sessions in a non-UTC zone. */
class MariaDbOperatorTest extends AbstractOperatorConformanceTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }
}
