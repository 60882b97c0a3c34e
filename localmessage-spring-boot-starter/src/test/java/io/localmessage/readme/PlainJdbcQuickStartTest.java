package io.localmessage.readme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.testing.TestDatabase;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The README's example does what its comments say, on a real database. */
class PlainJdbcQuickStartTest {
  @Test
  void theOrderAndItsMessageCommitAndThePointsAreGranted() {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL)) {
      io.localmessage.testing.Sql.update(
          db.dataSource(1), "CREATE TABLE purchase_order (id VARCHAR(64) PRIMARY KEY)");
      List<String> granted = new CopyOnWriteArrayList<>();
      try (LocalMessages lm =
          PlainJdbcQuickStart.placeOrder(
              db.dataSource(4),
              (key, payload) -> granted.add(key),
              (conn, id) -> {
                try (PreparedStatement ps =
                    conn.prepareStatement("INSERT INTO purchase_order (id) VALUES (?)")) {
                  ps.setString(1, id);
                  ps.executeUpdate();
                }
              },
              "o-1",
              "{\"points\":10}")) {
        await().atMost(Duration.ofSeconds(5)).until(() -> granted.contains("o-1"));
        assertThat(
                io.localmessage.testing.Sql.count(
                    db.dataSource(1), "SELECT COUNT(*) FROM purchase_order WHERE id = 'o-1'"))
            .isEqualTo(1);
      }
    }
  }
}
