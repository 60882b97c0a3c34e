package io.localmessage.cli;

import io.localmessage.testing.TestDatabase;

class PostgresCliOutputSecurityTest extends AbstractCliOutputSecurityTest {
  @Override
  protected TestDatabase.Kind kind() {
    return TestDatabase.Kind.POSTGRESQL;
  }
}
