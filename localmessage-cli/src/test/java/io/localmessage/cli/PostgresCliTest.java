package io.localmessage.cli;

import io.localmessage.testing.TestDatabase;

class PostgresCliTest extends AbstractCliTest {
  @Override
  protected TestDatabase.Kind kind() {
    return TestDatabase.Kind.POSTGRESQL;
  }
}
