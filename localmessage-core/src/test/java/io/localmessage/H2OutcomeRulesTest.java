package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The outcome rules on H2 in-process. */
class H2OutcomeRulesTest extends AbstractOutcomeRulesTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }
}
