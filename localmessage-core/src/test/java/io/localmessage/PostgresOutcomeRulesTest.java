package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The outcome rules on PostgreSQL. */
class PostgresOutcomeRulesTest extends AbstractOutcomeRulesTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }
}
