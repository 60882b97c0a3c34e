package io.localmessage.kafka;

import io.localmessage.testing.TestDatabase;

class PostgresInboxConsumerTest extends AbstractInboxConsumerTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }
}
