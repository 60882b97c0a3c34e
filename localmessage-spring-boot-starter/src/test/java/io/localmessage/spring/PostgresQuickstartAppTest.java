package io.localmessage.spring;

import io.localmessage.testing.TestDatabase;

class PostgresQuickstartAppTest extends AbstractQuickstartAppTest {
  @Override
  TestDatabase.Kind kind() {
    return TestDatabase.Kind.POSTGRESQL;
  }

  @Override
  String flywayLocation() {
    return "classpath:db/localmessage/{vendor}"; // {vendor} = postgresql
  }
}
