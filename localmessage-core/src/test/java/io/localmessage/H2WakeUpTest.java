package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** Retry timing without a notification channel, on H2. */
class H2WakeUpTest extends AbstractWakeUpTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }
}
