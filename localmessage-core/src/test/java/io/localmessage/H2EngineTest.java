package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The conformance suite on H2 in-process. */
class H2EngineTest extends AbstractEngineConformanceTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  @Override
  protected int volume() {
    return 5_000;
  }
}
