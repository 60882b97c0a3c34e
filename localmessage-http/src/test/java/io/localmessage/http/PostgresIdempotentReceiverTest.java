package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

class PostgresIdempotentReceiverTest extends AbstractIdempotentReceiverTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }
}
