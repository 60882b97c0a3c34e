package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** Bad input and operator actions on H2 in-process. */
class H2OperatorTest extends AbstractOperatorConformanceTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  /** H2 has no bind-parameter limit to cross; fewer tickets keep the suite fast. */
  @Override
  protected int bulkTickets() {
    return 5_000;
  }
}
