package io.localmessage.test;

import javax.sql.DataSource;

/** A database the extension started; each kind lives in its own class, loaded only when used. */
interface TestDatabase extends AutoCloseable {
  DataSource dataSource();

  @Override
  void close();
}
