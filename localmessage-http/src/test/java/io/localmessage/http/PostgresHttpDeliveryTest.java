package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

/** HTTP delivery on PostgreSQL, sessions in a non-UTC zone. */
class PostgresHttpDeliveryTest extends AbstractHttpDeliveryTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }
}
