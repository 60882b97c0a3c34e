package io.localmessage.spring;

import io.localmessage.testing.TestDatabase;

class MariaDbQuickstartAppTest extends AbstractQuickstartAppTest {
  @Override
  TestDatabase.Kind kind() {
    return TestDatabase.Kind.MARIADB;
  }

  @Override
  String flywayLocation() {
    // {vendor} is "mariadb" here, but the scripts ship as "mysql"
    return "classpath:db/localmessage/mysql";
  }
}
