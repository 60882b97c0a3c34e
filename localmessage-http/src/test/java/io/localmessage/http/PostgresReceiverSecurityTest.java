package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

class PostgresReceiverSecurityTest extends AbstractReceiverSecurityTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }
}
