package io.localmessage;

import io.localmessage.testing.TestDatabase;

class MariaDbAsyncHandlerTest extends AbstractAsyncHandlerTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB);
  }
}
