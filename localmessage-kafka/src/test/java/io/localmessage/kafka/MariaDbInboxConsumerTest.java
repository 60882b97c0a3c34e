package io.localmessage.kafka;

import io.localmessage.testing.TestDatabase;

class MariaDbInboxConsumerTest extends AbstractInboxConsumerTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }

  /** 10,000 run on PostgreSQL; here fewer keep the suite short (a commit per record, fsynced). */
  @Override
  protected int endToEndCount() {
    return 2_000;
  }
}
