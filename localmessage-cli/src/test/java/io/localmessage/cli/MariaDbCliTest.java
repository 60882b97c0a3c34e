package io.localmessage.cli;

import io.localmessage.testing.TestDatabase;

class MariaDbCliTest extends AbstractCliTest {
  @Override
  protected TestDatabase.Kind kind() {
    return TestDatabase.Kind.MARIADB;
  }
}
