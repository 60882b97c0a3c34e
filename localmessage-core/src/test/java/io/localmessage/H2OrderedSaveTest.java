package io.localmessage;

import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Overlapping ordered saves on H2. H2 shows a session waiting for a row lock as BLOCKED, but one
 * waiting for another transaction's uncommitted insert of the same key only as still running that
 * insert: both count as waiting here.
 */
class H2OrderedSaveTest extends AbstractOrderedSaveTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  @Override
  protected long sessionId(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT SESSION_ID()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Override
  protected boolean waitsForLock(Connection c, long session) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE SESSION_ID = ?"
                + " AND (SESSION_STATE = 'BLOCKED'"
                + " OR UPPER(EXECUTING_STATEMENT) LIKE 'INSERT INTO %\\_LOCK %')")) {
      ps.setLong(1, session);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }
}
