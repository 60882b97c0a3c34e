package io.localmessage.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.LocalMessages;
import io.localmessage.spi.ClaimRequest;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.Dialects;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault suite's record of claims must not accuse the engine of what it did not do, nor miss
 * what it did. A claim whose transaction began before the lease it takes had ended (a driver's
 * Parse arrives, planning and Bind take a few milliseconds, the claim's clock is read after them)
 * took an ended lease; a claim that ignores a live lease took a live one.
 */
class ClaimLogTest {
  private static final long LEASE_MS = 8_000;

  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Kind.class,
      names = {"POSTGRESQL", "MARIADB"})
  void aClaimOfALeaseThatEndedAfterItsTransactionBeganIsNotALiveLeaseClaim(TestDatabase.Kind kind)
      throws Exception {
    try (TestDatabase db = TestDatabase.create(kind)) {
      DataSource ds = prepare(db);
      String in50ms =
          kind == TestDatabase.Kind.MARIADB
              ? "UTC_TIMESTAMP(3) + INTERVAL 50000 MICROSECOND"
              : "statement_timestamp() + interval '50 milliseconds'";
      String now = kind == TestDatabase.Kind.MARIADB ? "UTC_TIMESTAMP(3)" : "statement_timestamp()";
      exec(ds, insert("ending", in50ms, now));
      Dialect dialect;
      List<ClaimedRow> claimed;
      try (Connection c = ds.getConnection()) {
        dialect = Dialects.detect(c);
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
          // the transaction begins while the lease is live and claims 150 ms later, once it ended
          st.execute(
              kind == TestDatabase.Kind.MARIADB ? "SELECT SLEEP(0.15)" : "SELECT pg_sleep(0.15)");
        }
        claimed = dialect.claim(c, FaultWorker.TABLE, request("r1"));
        c.commit();
      }
      assertThat(claimed).hasSize(1);
      List<DeliveryAudit.Claim> log = DeliveryAudit.loadClaims(ds);
      assertThat(log).singleElement().satisfies(c -> assertThat(c.newOwner()).isEqualTo("r1"));
      assertThat(log.get(0).oldLeaseEnd()).isLessThanOrEqualTo(log.get(0).at());
      assertThat(DeliveryAudit.ofLiveLease(log.get(0))).isFalse();

      // and a claim that ignores a lease still 10 s from its end is seen for what it is
      String in10s =
          kind == TestDatabase.Kind.MARIADB
              ? "UTC_TIMESTAMP(3) + INTERVAL 10 SECOND"
              : "statement_timestamp() + interval '10 seconds'";
      exec(ds, insert("live", in10s, now));
      exec(
          ds,
          "UPDATE "
              + FaultWorker.TABLE
              + " SET attempts = attempts + 1, version = version + 1, lease_owner = 'thief',"
              + " next_retry_at = "
              + (kind == TestDatabase.Kind.MARIADB
                  ? "UTC_TIMESTAMP(3) + INTERVAL 8 SECOND"
                  : "statement_timestamp() + interval '8 seconds'")
              + " WHERE idem_key = 'live'");
      assertThat(DeliveryAudit.loadClaims(ds))
          .filteredOn(c -> c.key().equals("live"))
          .singleElement()
          .satisfies(c -> assertThat(DeliveryAudit.ofLiveLease(c)).isTrue());
    }
  }

  private static DataSource prepare(TestDatabase db) throws SQLException {
    DataSource ds = db.dataSource(2);
    LocalMessages.builder(ds).table(FaultWorker.TABLE).autoCreateSchema(true).build().close();
    FaultRun.createClaimLog(ds, db);
    return ds;
  }

  private static ClaimRequest request(String owner) {
    return new ClaimRequest(
        List.of(new ClaimRequest.TypeLimit("t.log", 10, false, 5)), LEASE_MS, owner, null);
  }

  /** A ticket of attempt 1 held by replica r0 until {@code leaseEnd}. */
  private static String insert(String key, String leaseEnd, String now) {
    return "INSERT INTO "
        + FaultWorker.TABLE
        + " (kind, biz_type, idem_key, max_attempts, attempts, next_retry_at, lease_owner,"
        + " created_at, updated_at) VALUES (1, 't.log', '"
        + key
        + "', 5, 1, "
        + leaseEnd
        + ", 'r0', "
        + now
        + ", "
        + now
        + ")";
  }

  private static void exec(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
