package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The tracing suite on Postgres. */
class PostgresTracingTest extends AbstractTracingTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }
}
