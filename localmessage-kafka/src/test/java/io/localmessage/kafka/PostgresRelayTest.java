package io.localmessage.kafka;

import io.localmessage.testing.TestDatabase;

class PostgresRelayTest extends AbstractRelayTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }
}
