package io.localmessage.kafka;

import io.localmessage.testing.TestDatabase;

class PostgresTracingTest extends AbstractTracingTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }
}
