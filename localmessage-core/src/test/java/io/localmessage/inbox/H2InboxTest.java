package io.localmessage.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.Schema;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The inbox as a consumer uses it on its own data source: the default table, and {@link
 * Inbox#applyOnceInTransaction} on a pool whatever its autocommit setting.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class H2InboxTest {
  private TestDatabase db;
  private DataSource ds;

  @BeforeAll
  void createTables() throws Exception {
    db = TestDatabase.create(TestDatabase.Kind.H2);
    ds = db.dataSource(4);
    Schema.create(ds, LocalMessagesBuilder.DEFAULT_TABLE, LocalMessagesBuilder.DEFAULT_INBOX_TABLE);
    Sql.update(ds, "CREATE TABLE ledger (id VARCHAR(64) PRIMARY KEY)");
  }

  @AfterAll
  void dropDatabase() {
    db.close();
  }

  @Test
  void anInboxCreatedOnTheDataSourceAloneRecordsInTheDefaultInboxTable() {
    Inbox inbox = Inbox.create(ds);
    assertThat(inbox.applyOnceInTransaction("ledger", "evt-default", book("evt-default"))).isTrue();
    assertThat(inbox.applyOnceInTransaction("ledger", "evt-default", book("evt-default")))
        .isFalse();
    assertThat(
            Sql.count(
                ds,
                "SELECT COUNT(*) FROM "
                    + LocalMessagesBuilder.DEFAULT_INBOX_TABLE
                    + " WHERE consumer = 'ledger' AND message_id = 'evt-default'"))
        .isOne();
  }

  @Test
  void applyOnceInTransactionCommitsOnAPoolThatHandsOutConnectionsWithAutocommitOff() {
    // a common pool setting (Hikari autoCommit=false): closing such a connection without a commit
    // rolls its work back
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db.jdbcUrl());
    config.setUsername(db.user());
    config.setPassword(db.password());
    config.setAutoCommit(false);
    config.setMaximumPoolSize(2);
    try (HikariDataSource manual = new HikariDataSource(config)) {
      Inbox inbox = Inbox.create(manual);
      assertThat(inbox.applyOnceInTransaction("ledger", "evt-manual", book("evt-manual"))).isTrue();
      // another connection sees the effect and the inbox row: both committed
      assertThat(Sql.count(ds, "SELECT COUNT(*) FROM ledger WHERE id = 'ledger:evt-manual'"))
          .isOne();
      assertThat(inbox.applyOnceInTransaction("ledger", "evt-manual", book("evt-manual")))
          .isFalse();
    }
  }

  /** The consumer's effect: one ledger row per message, a duplicate key on a second one. */
  private static Inbox.Work book(String messageId) {
    return c -> {
      try (Statement st = c.createStatement()) {
        st.executeUpdate("INSERT INTO ledger (id) VALUES ('ledger:" + messageId + "')");
      }
    };
  }
}
