package io.localmessage.cli;

import io.localmessage.testing.TestDatabase;

class MariaDbCliOutputSecurityTest extends AbstractCliOutputSecurityTest {
  @Override
  protected TestDatabase.Kind kind() {
    return TestDatabase.Kind.MARIADB;
  }
}
