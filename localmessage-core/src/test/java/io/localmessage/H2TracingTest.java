package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The tracing suite on H2. */
class H2TracingTest extends AbstractTracingTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }
}
