package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** Bad input and operator actions on H2 in-process. */
class H2OperatorTest extends AbstractOperatorConformanceTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }
}
