package io.localmessage.spring;

import io.localmessage.testing.TestDatabase;

class MariaDbQuickstartAppTest extends AbstractQuickstartAppTest {
  @Override
  TestDatabase.Kind kind() {
    return TestDatabase.Kind.MARIADB;
  }

  @Override
  String flywayLocation() {
    return null; // localmessage.schema.initialize=true, as in the README quick start
  }
}
