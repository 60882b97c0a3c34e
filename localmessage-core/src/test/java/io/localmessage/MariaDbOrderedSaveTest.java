package io.localmessage;

import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Overlapping ordered saves on MariaDB: a waiting transaction is in state LOCK WAIT. */
class MariaDbOrderedSaveTest extends AbstractOrderedSaveTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }

  @Override
  protected long sessionId(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT CONNECTION_ID()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Override
  protected boolean waitsForLock(Connection c, long session) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT COUNT(*) FROM information_schema.INNODB_TRX"
                + " WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'")) {
      ps.setLong(1, session);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }
}
