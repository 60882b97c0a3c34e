package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.admin.MessageView;
import io.localmessage.admin.TypeStats;
import io.localmessage.spi.Dialects;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.Intercepting;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What operators read (the per-type stats, the search by key) and what the retention purge deletes,
 * on H2 with rows placed by hand where the engine would need hours to produce them.
 */
class H2QueriesAndRetentionTest extends DatabaseTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  @Test
  void statsCountCanceledAndSucceededMessagesAndListAPausedTypeThatHasNone() {
    LocalMessages lm = fx.build(fx.builder());
    SaveResult canceled = fx.save(lm, NewMessage.action("t.a", "c").build());
    SaveResult done1 = fx.save(lm, NewMessage.action("t.a", "s1").build());
    SaveResult done2 = fx.save(lm, NewMessage.action("t.a", "s2").build());
    fx.save(lm, NewMessage.action("t.a", "p").build());
    assertThat(lm.admin().cancel(canceled.id(), "ops", "obsolete")).isTrue();
    // a retained success, as retainSucceeded keeps it
    Sql.update(
        ds, "UPDATE " + fx.table + " SET status = 1 WHERE id IN (?, ?)", done1.id(), done2.id());
    lm.admin().pause("t.idle", "ops", "channel down before anything was saved");

    Map<String, TypeStats> stats =
        lm.admin().stats().stream()
            .collect(Collectors.toMap(TypeStats::bizType, Function.identity()));
    assertThat(stats).containsOnlyKeys("t.a", "t.idle");
    TypeStats a = stats.get("t.a");
    assertThat(a.pending()).isEqualTo(1);
    assertThat(a.canceled()).isEqualTo(1);
    assertThat(a.succeeded()).isEqualTo(2);
    assertThat(a.dead()).isZero();
    assertThat(stats.get("t.idle"))
        .isEqualTo(new TypeStats("t.idle", 0, 0, 0, 0, 0, 0, Duration.ZERO, Duration.ZERO, true));
  }

  @Test
  void anAgeIsNeverNegativeWhenAMessageIsStampedAheadOfTheDatabaseClock() {
    LocalMessages lm = fx.build(fx.builder());
    SaveResult s = fx.save(lm, NewMessage.action("t.a", "k").build());
    // written through a primary whose clock ran ahead, or edited by hand
    Sql.update(
        ds,
        "UPDATE " + fx.table + " SET created_at = DATEADD(MINUTE, 10, created_at) WHERE id = ?",
        s.id());
    assertThat(lm.admin().stats())
        .singleElement()
        .satisfies(t -> assertThat(t.oldestPendingAge()).isEqualTo(Duration.ZERO));
  }

  @Test
  void aKeyFoundUnderMoreThanAThousandTypesIsReturnedOldestFirstAndCappedAtAThousand() {
    fx.build(fx.builder());
    int types = OperatorActions.OPERATOR_CHUNK + 1;
    // type names sort against the insertion order: the alphabetically last type holds the oldest
    // message, and its search runs in the second statement
    Sql.update(
        ds,
        "INSERT INTO "
            + fx.table
            + " (kind, biz_type, idem_key, max_attempts, next_retry_at, created_at, updated_at)"
            + " SELECT 1, CONCAT('t.', LPAD(CAST(5000 - X AS VARCHAR), 4, '0')), 'order-1', 3,"
            + " CURRENT_TIMESTAMP(3), CURRENT_TIMESTAMP(3), CURRENT_TIMESTAMP(3)"
            + " FROM SYSTEM_RANGE(1, ?) ORDER BY X",
        types);
    List<Long> ids = new ArrayList<>();
    try (Connection c = ds.getConnection();
        var ps = c.prepareStatement("SELECT id FROM " + fx.table + " ORDER BY id");
        var rs = ps.executeQuery()) {
      while (rs.next()) {
        ids.add(rs.getLong(1));
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
    MessageQueries queries =
        new MessageQueries(ds, Dialects.named("h2"), Tables.of(fx.table, fx.table + "_inbox"));
    assertThat(queries.findByIdemKey("order-1"))
        .extracting(MessageView::id)
        .containsExactlyElementsOf(ids.subList(0, 1000));
  }

  @Test
  void thePurgeDeletesOnlyWhatWasLastTouchedBeforeTheRetentionAndSaysHowMany() {
    fx.build(fx.builder());
    String t = fx.table;
    // DEAD rows: both times old; recently updated; next_retry_at recent (the due index range)
    insertDead("old", 120, 120);
    insertDead("updated-recently", 120, 10);
    insertDead("due-recently", 10, 120);
    insertDead("other-type-old", 120, 120);
    Sql.update(ds, "UPDATE " + t + " SET biz_type = 't.b' WHERE idem_key = 'other-type-old'");
    Retention retention = new Retention(ds, Dialects.named("h2"), t);

    assertThat(retention.purge(MessageStatus.DEAD, "t.a", Duration.ofHours(1), 100)).isEqualTo(1);
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + t + " WHERE idem_key = 'old'")).isZero();
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + t + " WHERE biz_type = 't.a'"))
        .as("rows touched within the hour are kept")
        .isEqualTo(2);
    assertThat(retention.purge(MessageStatus.DEAD, null, Duration.ofHours(1), 100)).isEqualTo(1);
    assertThat(fx.countAll()).isEqualTo(2);
  }

  @Test
  void thePurgeRunsAtReadCommittedAndHandsTheConnectionBackAtItsOwnIsolation() throws Exception {
    fx.build(fx.builder());
    insertDead("old", 120, 120);
    List<Integer> isolationAtDelete = new ArrayList<>();
    try (Connection shared = ds.getConnection()) {
      shared.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      // a connection nobody resets: the purge must not leave it at its own isolation
      Connection recorded =
          Intercepting.dataSource(
                  Intercepting.single(shared),
                  (real, m, a) -> {
                    if (m.getName().equals("prepareStatement")
                        && ((String) a[0]).startsWith("DELETE")) {
                      isolationAtDelete.add(real.getTransactionIsolation());
                    }
                    return Intercepting.PROCEED;
                  })
              .getConnection();
      Retention retention =
          new Retention(Intercepting.single(recorded), Dialects.named("h2"), fx.table);
      assertThat(retention.purge(MessageStatus.DEAD, "t.a", Duration.ofHours(1), 100)).isEqualTo(1);
      assertThat(isolationAtDelete)
          .as("no range locks that claims would wait for")
          .containsExactly(Connection.TRANSACTION_READ_COMMITTED);
      assertThat(shared.getTransactionIsolation()).isEqualTo(Connection.TRANSACTION_SERIALIZABLE);
    }
  }

  /** A DEAD message of t.a due {@code dueMinutesAgo} and updated {@code updatedMinutesAgo}. */
  private void insertDead(String key, int dueMinutesAgo, int updatedMinutesAgo) {
    Sql.update(
        ds,
        "INSERT INTO "
            + fx.table
            + " (kind, biz_type, idem_key, status, attempts, max_attempts, next_retry_at,"
            + " created_at, updated_at) VALUES (1, 't.a', ?, 2, 3, 3,"
            + " DATEADD(MINUTE, ?, CURRENT_TIMESTAMP(3)), DATEADD(MINUTE, -200, CURRENT_TIMESTAMP(3)),"
            + " DATEADD(MINUTE, ?, CURRENT_TIMESTAMP(3)))",
        key,
        -dueMinutesAgo,
        -updatedMinutesAgo);
  }
}
