package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** Bad input and operator actions on PostgreSQL, sessions in a non-UTC zone. */
class PostgresOperatorTest extends AbstractOperatorConformanceTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL, "Asia/Kolkata");
  }
}
