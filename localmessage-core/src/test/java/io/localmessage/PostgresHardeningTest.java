package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The hardening suite on Postgres. */
class PostgresHardeningTest extends AbstractHardeningTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }
}
