package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The conformance suite on PostgreSQL, sessions in a non-UTC zone. */
class PostgresEngineTest extends AbstractEngineConformanceTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }
}
