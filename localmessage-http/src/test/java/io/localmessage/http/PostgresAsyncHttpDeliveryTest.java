package io.localmessage.http;

import io.localmessage.testing.TestDatabase;

/** The HTTP delivery suite with the delivery registered asynchronously (its non-blocking send). */
class PostgresAsyncHttpDeliveryTest extends AbstractHttpDeliveryTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }

  @Override
  protected boolean async() {
    return true;
  }
}
