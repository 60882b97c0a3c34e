package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The outcome rules on MariaDB, sessions in a non-UTC zone. */
class MariaDbOutcomeRulesTest extends AbstractOutcomeRulesTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }
}
