package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

class PostgresOrderToPointsTest extends AbstractOrderToPointsTest {
  @Override
  protected TestDatabase.Kind kind() {
    return TestDatabase.Kind.POSTGRESQL;
  }
}
