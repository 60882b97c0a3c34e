package io.localmessage.test;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import javax.sql.DataSource;

/** A PostgreSQL server started in this process on a free port, stopped at close. */
final class EmbeddedPostgresDatabase implements TestDatabase {
  private final EmbeddedPostgres pg;

  EmbeddedPostgresDatabase() {
    try {
      this.pg = EmbeddedPostgres.builder().start();
    } catch (IOException e) {
      throw new IllegalStateException("the embedded PostgreSQL did not start: " + e, e);
    }
  }

  @Override
  public DataSource dataSource() {
    return pg.getPostgresDatabase();
  }

  @Override
  public void close() {
    try {
      pg.close();
    } catch (IOException e) {
      throw new IllegalStateException("stopping the embedded PostgreSQL failed: " + e, e);
    }
  }
}
