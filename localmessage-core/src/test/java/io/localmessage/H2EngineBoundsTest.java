package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The engine's bounds on H2 in-process. */
class H2EngineBoundsTest extends AbstractEngineBoundsTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }
}
