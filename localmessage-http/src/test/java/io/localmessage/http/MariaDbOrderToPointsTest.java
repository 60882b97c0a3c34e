package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

class MariaDbOrderToPointsTest extends AbstractOrderToPointsTest {
  @Override
  protected TestDatabase.Kind kind() {
    return TestDatabase.Kind.MARIADB;
  }
}
