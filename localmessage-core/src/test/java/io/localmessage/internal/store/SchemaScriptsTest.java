package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.Schema;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How a schema script is cut into statements and which of them a rerun skips: {@code apply} runs on
 * every start, so an {@code ALTER TABLE} whose changes are there already must not run again (MySQL
 * has no {@code ADD COLUMN IF NOT EXISTS}, and a {@code MODIFY} rebuilds the table), while every
 * other statement, and an alter of a table that cannot be read, still runs.
 */
class SchemaScriptsTest extends DatabaseTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  @Override
  protected int poolSize() {
    return 2;
  }

  @BeforeAll
  void table() {
    Sql.update(ds, "CREATE TABLE shaped (a INTEGER NOT NULL, b VARCHAR(10))");
  }

  @Test
  void aScriptIsCutAtEachSemicolonWithItsCommentsLeftOut() {
    String script =
        """
        -- a header comment; with a semicolon
        CREATE TABLE x (id INT); -- after the statement

          -- an indented comment line
        CREATE TABLE y (
          id INT -- the key
        );
        """;
    assertThat(Schema.statements(script))
        .containsExactly("CREATE TABLE x (id INT)", "CREATE TABLE y (\n  id INT \n)");
  }

  @Test
  void anAlterWhoseAddedColumnsAllExistIsSkippedAndOneAddingANewColumnRuns() throws Exception {
    try (Connection c = ds.getConnection()) {
      // b is the last column of the table: every column is looked at, the last one too
      Schema.apply(c, List.of("ALTER TABLE shaped ADD COLUMN b VARCHAR(10)"));
      Schema.apply(c, List.of("ALTER TABLE shaped ADD COLUMN a INTEGER, ADD COLUMN b INTEGER"));
      assertThat(SchemaScripts.needed(c, "ALTER TABLE shaped ADD COLUMN c INTEGER")).isTrue();
      assertThat(SchemaScripts.needed(c, "ALTER TABLE shaped ADD COLUMN b INT, ADD COLUMN c INT"))
          .as("one column of two is missing")
          .isTrue();
    }
  }

  @Test
  void anAlterThatModifiesAColumnRunsUnlessTheColumnHasTheNewTypeAlready() throws Exception {
    try (Connection c = ds.getConnection()) {
      assertThat(SchemaScripts.needed(c, "ALTER TABLE shaped MODIFY a INTEGER NOT NULL"))
          .as("a is an INTEGER already")
          .isFalse();
      assertThat(SchemaScripts.needed(c, "ALTER TABLE shaped MODIFY COLUMN a integer")).isFalse();
      assertThat(SchemaScripts.needed(c, "ALTER TABLE shaped MODIFY a BIGINT NOT NULL")).isTrue();
      assertThat(SchemaScripts.needed(c, "ALTER TABLE shaped MODIFY z INTEGER"))
          .as("a column that is not there")
          .isTrue();
      assertThat(
              SchemaScripts.needed(
                  c, "ALTER TABLE shaped MODIFY a INTEGER NOT NULL, MODIFY b BIGINT"))
          .as("the second of two changes is still to do")
          .isTrue();
    }
  }

  @Test
  void everyStatementButAnAlterRunsAndAnAlterOfAMissingTableFailsLoudly() throws Exception {
    try (Connection c = ds.getConnection()) {
      assertThat(SchemaScripts.needed(c, "CREATE INDEX IF NOT EXISTS ix_shaped ON shaped (a)"))
          .isTrue();
      // skipping it would hide that the table the script expects is not there
      assertThatThrownBy(
              () ->
                  Schema.apply(
                      c, List.of("ALTER TABLE no_such_table ADD CONSTRAINT uk_x UNIQUE (a)")))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("NO_SUCH_TABLE");
    }
  }
}
