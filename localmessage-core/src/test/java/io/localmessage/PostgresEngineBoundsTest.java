package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The engine's bounds on PostgreSQL. */
class PostgresEngineBoundsTest extends AbstractEngineBoundsTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }
}
