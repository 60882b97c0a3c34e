package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The hardening suite on MariaDb. */
class MariaDbHardeningTest extends AbstractHardeningTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB);
  }
}
