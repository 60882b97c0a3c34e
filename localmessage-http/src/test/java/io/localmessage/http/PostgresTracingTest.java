package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

class PostgresTracingTest extends AbstractTracingTest {
  @Override
  protected TestDatabase.Kind kind() {
    return TestDatabase.Kind.POSTGRESQL;
  }
}
