package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

/** HTTP delivery on MariaDB, sessions in a non-UTC zone. */
class MariaDbHttpDeliveryTest extends AbstractHttpDeliveryTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }
}
