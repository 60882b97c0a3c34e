package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.admin.MessageView;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A search by idempotency key alone (console, CLI) must not scan the ticket table: with 100,000
 * tickets a sequential scan is what every viewer could make the database do on each search.
 */
class PostgresSearchPlanTest {

  private static String plan(DataSource ds, String sql, Object... args) throws Exception {
    StringBuilder out = new StringBuilder();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.append(rs.getString(1)).append('\n');
        }
      }
    }
    return out.toString();
  }

  @Test
  void searchByIdemKeyUsesTheUniqueIndexNotATableScan() throws Exception {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
        EngineFixture fx = new EngineFixture(db.dataSource(4))) {
      DataSource ds = fx.dataSource;
      LocalMessages lm = fx.build(fx.builder());
      fx.save(lm, NewMessage.action("type.0", "needle").build());
      Sql.update(
          ds,
          "INSERT INTO "
              + fx.table
              + " (kind, biz_type, idem_key, max_attempts, status, attempts, version,"
              + " next_retry_at, created_at, updated_at)"
              + " SELECT 1, 'type.' || (g % 5), 'k-' || g, 10, 0, 0, 0, now(), now(), now()"
              + " FROM generate_series(1, 100000) g");
      Sql.update(ds, "ANALYZE " + fx.table);

      String scan = plan(ds, "SELECT id FROM " + fx.table + " WHERE idem_key = ?", "needle");
      System.out.println("[search plan] by idem_key alone:\n" + scan);
      assertThat(scan).as("what the search did before").contains("Seq Scan");

      String sql = MessageQueries.findByIdemKeySql(fx.table, 5);
      String now = plan(ds, sql, "type.0", "type.1", "type.2", "type.3", "type.4", "needle");
      System.out.println("[search plan] per type through the unique index:\n" + now);
      assertThat(now).doesNotContain("Seq Scan").contains("uk_" + fx.table + "_idem");

      List<MessageView> found = lm.admin().findByIdemKey("needle");
      assertThat(found).extracting(MessageView::bizType).containsExactly("type.0");
      assertThat(lm.admin().findByIdemKey("k-7"))
          .extracting(MessageView::bizType)
          .containsExactly("type.2");
    }
  }
}
