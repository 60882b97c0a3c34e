package io.localmessage;

import io.localmessage.testing.TestDatabase;

/** The hardening suite on H2. */
class H2HardeningTest extends AbstractHardeningTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }
}
