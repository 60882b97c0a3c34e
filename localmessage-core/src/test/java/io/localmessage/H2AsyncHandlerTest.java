package io.localmessage;

import io.localmessage.testing.TestDatabase;

class H2AsyncHandlerTest extends AbstractAsyncHandlerTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }
}
