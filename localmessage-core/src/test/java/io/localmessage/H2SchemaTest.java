package io.localmessage;

import static io.localmessage.NewMessage.action;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.inbox.Inbox;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.Dialects;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Schema}, for those who create the tables outside an engine (a migration, a tool, a test):
 * the DDL it hands out and the tables it creates are the ones an engine works on.
 */
class H2SchemaTest extends DatabaseTest {
  private static final Dialect H2 = Dialects.named("h2");

  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  @Test
  void theShippedDdlIsEveryStepOfTheDialectInOrderOnTheDefaultTables() {
    String ddl = Schema.ddl(H2);
    assertThat(ddl)
        .startsWith(Schema.read(H2.schemaResource()))
        .contains(Schema.read("db/localmessage/h2/V3__localmessage_keys_requeue.sql"))
        .contains("CREATE TABLE IF NOT EXISTS local_message (")
        .contains("CREATE TABLE IF NOT EXISTS local_message_control (")
        .contains("CREATE TABLE IF NOT EXISTS local_message_audit (")
        .contains("CREATE TABLE IF NOT EXISTS local_inbox (");
    assertThatThrownBy(() -> Schema.ddl(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("dialect");
  }

  @Test
  void ddlAppliedForOtherTableNamesMakesTablesAnEngineWorksOn() throws Exception {
    String ddl = Schema.ddl(H2, fx.table, fx.table + "_in");
    assertThat(ddl)
        .doesNotContain("local_message")
        .doesNotContain("local_inbox")
        .contains("CREATE TABLE IF NOT EXISTS " + fx.table + "_control (")
        .contains("ix_" + fx.table + "_due ON " + fx.table + " ");
    List<String> statements = Schema.statements(ddl);
    try (Connection c = ds.getConnection()) {
      Schema.apply(c, statements);
      // safe to run on every start: nothing left to do the second time
      Schema.apply(c, statements);
    }
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_in")).isZero();
    assertDeliversOn(fx.builder().autoCreateSchema(false).inboxTable(fx.table + "_in"));
  }

  @Test
  void createMakesTheMissingTablesAndIsSafeToRunAgain() throws Exception {
    Schema.create(ds, fx.table, fx.table + "_inbox");
    Schema.create(ds, fx.table, fx.table + "_inbox");
    assertDeliversOn(fx.builder().autoCreateSchema(false));
    Inbox inbox = Inbox.create(ds, fx.table + "_inbox", null);
    assertThat(inbox.applyOnceInTransaction("ledger", "evt-1", c -> {})).isTrue();
    assertThat(inbox.applyOnceInTransaction("ledger", "evt-1", c -> {})).isFalse();
  }

  @Test
  void aTableNameThatIsNotAPlainIdentifierIsRefusedBeforeAnyDdl() {
    assertThatThrownBy(() -> Schema.ddl(H2, "t; DROP TABLE x", "t_inbox"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("table 't; DROP TABLE x' is not a plain SQL identifier");
    assertThatThrownBy(() -> Schema.create(ds, fx.table, "bad name"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("inboxTable 'bad name' is not a plain SQL identifier");
    assertThat(
            Sql.count(
                ds,
                "SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME = ?",
                fx.table.toUpperCase(java.util.Locale.ROOT)))
        .as("nothing created")
        .isZero();
  }

  @Test
  void createMakesSchemaQualifiedTablesWhoseIndexesAreNamedAfterTheBareTableName()
      throws Exception {
    String schema = fx.table + "_s";
    Sql.update(ds, "CREATE SCHEMA " + schema);
    String table = schema + "." + fx.table;
    Schema.create(ds, table, table + "_inbox");
    // index names cannot carry the schema prefix; they are created in the table's schema
    assertThat(
            Sql.count(
                ds,
                "SELECT COUNT(*) FROM INFORMATION_SCHEMA.INDEXES WHERE TABLE_SCHEMA = ?"
                    + " AND INDEX_NAME = ?",
                schema.toUpperCase(java.util.Locale.ROOT),
                ("ix_" + fx.table + "_due").toUpperCase(java.util.Locale.ROOT)))
        .isEqualTo(1);
    LocalMessages lm =
        fx.build(fx.builder().table(table).inboxTable(table + "_inbox").autoCreateSchema(false));
    lm.register("t.a", m -> {}, EngineFixture.config().build());
    fx.save(lm, action("t.a", "k").build());
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + table)).isEqualTo(1);
    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM " + table)).isZero();
  }

  /** An engine built by {@code b} on the tables made beforehand saves and delivers a message. */
  private void assertDeliversOn(LocalMessagesBuilder b) {
    LocalMessages lm = fx.build(b);
    List<Long> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
    lm.register("t.a", m -> handled.add(m.id()), EngineFixture.config().build());
    SaveResult s = fx.save(lm, action("t.a", "k").payload("p").build());
    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(handled).containsExactly(s.id());
    assertThat(fx.countAll()).isZero();
  }
}
