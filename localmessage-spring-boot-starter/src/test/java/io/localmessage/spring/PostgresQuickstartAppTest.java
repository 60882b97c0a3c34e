package io.localmessage.spring;

import io.localmessage.testing.TestDatabase;

class PostgresQuickstartAppTest extends AbstractQuickstartAppTest {
  @Override
  TestDatabase.Kind kind() {
    return TestDatabase.Kind.POSTGRESQL;
  }
}
