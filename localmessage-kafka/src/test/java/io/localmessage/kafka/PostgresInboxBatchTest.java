package io.localmessage.kafka;

import io.localmessage.testing.TestDatabase;

class PostgresInboxBatchTest extends AbstractInboxBatchTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }
}
