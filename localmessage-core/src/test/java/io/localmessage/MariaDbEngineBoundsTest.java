package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The engine's bounds on MariaDB, sessions in a non-UTC zone. */
class MariaDbEngineBoundsTest extends AbstractEngineBoundsTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }
}
