package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.StoreException;
import java.sql.BatchUpdateException;
import java.sql.SQLDataException;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the write-behind retries as a database that is briefly away (the same batch later) and what
 * it takes as a refusal of the statement itself (row by row, then dropped): the SQLSTATE classes
 * and vendor codes the drivers of PostgreSQL, MySQL/MariaDB and H2 report, wherever in the cause
 * chain the engine's own wrapping put them.
 */
class SqlErrorsTest {

  @ParameterizedTest(name = "SQLSTATE {0}, code {1}: transient={2}")
  @CsvSource({
    // connection exceptions: lost, refused, not established
    "08001, 0, true",
    "08006, 0, true",
    // transaction rollback: deadlock, serialization failure
    "40001, 0, true",
    "40P01, 0, true",
    // insufficient resources (too many connections), operator intervention (admin shutdown, the
    // server starting up), a driver's timeout
    "53300, 0, true",
    "57P01, 0, true",
    "57P03, 0, true",
    "HYT00, 0, true",
    // MySQL/MariaDB by vendor code: lock wait timeout, deadlock, server gone away, lost connection
    "HY000, 1205, true",
    "HY000, 1213, true",
    "HY000, 2006, true",
    "HY000, 2013, true",
    // what the statement itself is refused for
    "22001, 0, false",
    "23505, 0, false",
    "42P01, 0, false",
    "HY000, 1406, false",
    "HY000, 0, false",
    "'', 1204, false",
    "'', 1214, false",
  })
  void bySqlStateAndVendorCode(String state, int code, boolean transientError) {
    SQLException e = new SQLException("test", state.isEmpty() ? null : state, code);
    assertThat(SqlErrors.isTransient(e)).isEqualTo(transientError);
    // the engine wraps what the store throws: the chain is searched
    assertThat(SqlErrors.isTransient(new StoreException("writing back failed", e)))
        .isEqualTo(transientError);
  }

  @Test
  void byExceptionTypeWhateverTheState() {
    assertThat(SqlErrors.isTransient(new SQLTransientConnectionException("pool timeout"))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLTimeoutException("query timeout"))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLRecoverableException("reconnect"))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLNonTransientConnectionException("closed"))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLDataException("too long", "22001"))).isFalse();
    assertThat(SqlErrors.isTransient(new SQLIntegrityConstraintViolationException("dup", "23000")))
        .isFalse();
  }

  @Test
  void aCauseDeepInTheChainCountsAndNonSqlFailuresDoNot() {
    SQLException lost = new SQLException("I/O error", "08006");
    BatchUpdateException batch = new BatchUpdateException("batch", "22001", 0, new int[0], lost);
    assertThat(SqlErrors.isTransient(new RuntimeException(new RuntimeException(batch)))).isTrue();
    assertThat(SqlErrors.isTransient(new IllegalStateException("a bug"))).isFalse();
    assertThat(SqlErrors.isTransient(null)).isFalse();
    assertThat(SqlErrors.isTransient(new SQLException("no state"))).isFalse();
  }
}
