package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

class MariaDbReceiverSecurityTest extends AbstractReceiverSecurityTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB);
  }
}
