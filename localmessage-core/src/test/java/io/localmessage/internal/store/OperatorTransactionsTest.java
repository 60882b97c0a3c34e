package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.StoreException;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.Intercepting;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The transaction every operator action runs in: all or nothing, committed whatever the pool's
 * autocommit default, retried on a deadlock or serialization failure (an operator's row lock meets
 * the workers' claims; InnoDB may pick the operator as the victim) at most three times in all, and
 * the connection handed back as it was lent.
 */
class OperatorTransactionsTest extends DatabaseTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  @Override
  protected int poolSize() {
    return 4;
  }

  @BeforeAll
  void table() {
    Sql.update(ds, "CREATE TABLE probe (n INT NOT NULL)");
  }

  @BeforeEach
  void empty() {
    Sql.update(ds, "DELETE FROM probe");
  }

  @Test
  void aDeadlockVictimIsRetriedAndOnlyTheAttemptThatCommittedLeavesItsWrites() {
    OperatorTransactions tx = new OperatorTransactions(ds);
    AtomicInteger attempts = new AtomicInteger();
    String result =
        tx.inTransaction(
            c -> {
              int n = attempts.incrementAndGet();
              insert(c, n);
              if (n < 3) {
                throw new SQLException("deadlock detected", "40001");
              }
              return "done";
            },
            "probing");
    assertThat(result).isEqualTo("done");
    assertThat(attempts).hasValue(3);
    assertThat(rows(ds)).as("the failed attempts were rolled back").containsExactly(3);
  }

  @Test
  void mySqlsDeadlockErrorCodeIsRetriedWhateverItsSqlState() {
    OperatorTransactions tx = new OperatorTransactions(ds);
    AtomicInteger attempts = new AtomicInteger();
    tx.inTransaction(
        c -> {
          int n = attempts.incrementAndGet();
          insert(c, n);
          if (n == 1) {
            throw new SQLException("Deadlock found when trying to get lock", "HY000", 1213);
          }
          return null;
        },
        "probing");
    assertThat(attempts).hasValue(2);
    assertThat(rows(ds)).containsExactly(2);
  }

  @Test
  void aFifthDeadlockInARowIsReportedWithTheActionAndNothingIsWritten() {
    OperatorTransactions tx = new OperatorTransactions(ds);
    AtomicInteger attempts = new AtomicInteger();
    SQLException deadlock = new SQLException("deadlock detected", "40001");
    // a sixth attempt would succeed: the limit, not luck, ends the retries
    assertThatThrownBy(
            () ->
                tx.inTransaction(
                    c -> {
                      int n = attempts.incrementAndGet();
                      insert(c, n);
                      if (n <= Transactions.RETRYING_TRIES) {
                        throw deadlock;
                      }
                      return null;
                    },
                    "requeueing dead messages"))
        .isInstanceOf(StoreException.class)
        .hasMessage("requeueing dead messages failed: deadlock detected")
        .hasCause(deadlock);
    assertThat(attempts).hasValue(Transactions.RETRYING_TRIES);
    assertThat(rows(ds)).isEmpty();
  }

  @Test
  void anErrorThatIsNotADeadlockIsReportedAtOnceAndRolledBack() {
    OperatorTransactions tx = new OperatorTransactions(ds);
    AtomicInteger attempts = new AtomicInteger();
    assertThatThrownBy(
            () ->
                tx.inTransaction(
                    c -> {
                      insert(c, attempts.incrementAndGet());
                      throw new SQLException("duplicate key", "23505");
                    },
                    "cancelling message 7"))
        .isInstanceOf(StoreException.class)
        .hasMessage("cancelling message 7 failed: duplicate key");
    assertThat(attempts).hasValue(1);
    assertThat(rows(ds)).isEmpty();

    IllegalStateException bug = new IllegalStateException("a bug in the action");
    assertThatThrownBy(
            () ->
                tx.inTransaction(
                    c -> {
                      insert(c, 9);
                      throw bug;
                    },
                    "cancelling message 7"))
        .isSameAs(bug);
    assertThat(rows(ds)).isEmpty();
  }

  @Test
  void onAPoolThatHandsOutConnectionsWithoutAutocommitTheActionIsCommitted() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    config.setUsername(db.user());
    config.setPassword(db.password());
    config.setMaximumPoolSize(2);
    config.setAutoCommit(false);
    try (HikariDataSource manual = new HikariDataSource(config)) {
      // Hikari rolls back what is left uncommitted when a connection comes back
      new OperatorTransactions(manual).inTransaction(c -> insert(c, 1), "probing");
    }
    assertThat(rows(ds)).containsExactly(1);
  }

  @Test
  void theConnectionIsHandedBackInTheAutocommitModeItWasLentIn() throws Exception {
    // a data source that does not reset its connections (a single shared connection, a plain
    // driver wrapper) gives the next borrower whatever mode the action left behind
    try (Connection shared = ds.getConnection()) {
      DataSource single = Intercepting.single(shared);
      new OperatorTransactions(single).inTransaction(c -> insert(c, 1), "probing");
      assertThat(shared.getAutoCommit()).isTrue();

      shared.setAutoCommit(false);
      new OperatorTransactions(single).inTransaction(c -> insert(c, 2), "probing");
      assertThat(shared.getAutoCommit()).isFalse();
      shared.setAutoCommit(true);
    }
    assertThat(rows(ds)).containsExactly(1, 2);
  }

  @Test
  void whenTheRollbackFailsTooTheErrorReportedIsTheOneThatBrokeTheAction() {
    SQLException rollbackFailed = new SQLException("connection reset", "08006");
    DataSource broken =
        Intercepting.dataSource(
            ds,
            (real, m, a) -> {
              if (m.getName().equals("rollback")) {
                real.rollback();
                throw rollbackFailed;
              }
              return Intercepting.PROCEED;
            });
    SQLException cause = new SQLException("value too long", "22001");
    assertThatThrownBy(
            () ->
                new OperatorTransactions(broken)
                    .inTransaction(
                        c -> {
                          throw cause;
                        },
                        "pausing/resuming t.a"))
        .isInstanceOf(StoreException.class)
        .hasMessage("pausing/resuming t.a failed: value too long")
        .hasCause(cause);
    assertThat(cause.getSuppressed()).containsExactly(rollbackFailed);
  }

  private static Void insert(Connection c, int n) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO probe (n) VALUES (?)")) {
      ps.setInt(1, n);
      ps.executeUpdate();
    }
    return null;
  }

  private static List<Integer> rows(DataSource ds) {
    List<Integer> out = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT n FROM probe ORDER BY n");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(rs.getInt(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return out;
  }
}
