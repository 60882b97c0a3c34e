package io.localmessage;

import io.localmessage.testing.TestDatabase;

class PostgresAsyncHandlerTest extends AbstractAsyncHandlerTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }
}
