package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** Retry timing without a notification channel, on MariaDb. */
class MariaDbWakeUpTest extends AbstractWakeUpTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB);
  }
}
