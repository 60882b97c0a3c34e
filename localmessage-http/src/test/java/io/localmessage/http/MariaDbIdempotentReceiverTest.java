package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

class MariaDbIdempotentReceiverTest extends AbstractIdempotentReceiverTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }
}
