package io.localmessage.spring;

import io.localmessage.testing.TestDatabase;

class MariaDbQuickstartAppTest extends AbstractQuickstartAppTest {
  @Override
  TestDatabase.Kind kind() {
    return TestDatabase.Kind.MARIADB;
  }
}
