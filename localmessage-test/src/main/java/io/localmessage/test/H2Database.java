package io.localmessage.test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcConnectionPool;

/** A uniquely named H2 database in memory, dropped at close. */
final class H2Database implements TestDatabase {
  private final JdbcConnectionPool pool;

  H2Database() {
    String name = "lm_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    this.pool =
        JdbcConnectionPool.create(
            "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", "sa", "");
    pool.setMaxConnections(32);
  }

  @Override
  public DataSource dataSource() {
    return pool;
  }

  @Override
  public void close() {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      st.execute("SHUTDOWN");
    } catch (SQLException e) {
      throw new IllegalStateException("dropping the H2 test database failed: " + e, e);
    } finally {
      pool.dispose();
    }
  }
}
