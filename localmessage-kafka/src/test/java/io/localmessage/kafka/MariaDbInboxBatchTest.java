package io.localmessage.kafka;

import io.localmessage.testing.TestDatabase;

class MariaDbInboxBatchTest extends AbstractInboxBatchTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }
}
