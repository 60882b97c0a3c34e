package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

class MariaDbTracingTest extends AbstractTracingTest {
  @Override
  protected TestDatabase.Kind kind() {
    return TestDatabase.Kind.MARIADB;
  }
}
