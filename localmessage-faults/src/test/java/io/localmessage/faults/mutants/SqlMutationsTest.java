package io.localmessage.faults.mutants;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The mutation points the generator finds in statements shaped like the engine's. */
class SqlMutationsTest {
  @Test
  void aWriteBackDeleteGivesEachConjunctAndComparisonOnce() {
    String sql =
        "DELETE FROM lm1 t USING unnest(?::bigint[], ?::bigint[]) AS c(id, v)"
            + " WHERE t.id = c.id AND t.version = c.v AND t.status = 0";
    List<String> descriptions =
        SqlMutations.of(sql).stream().map(SqlMutations.Mutation::description).toList();
    assertThat(descriptions)
        .contains("drop `t.id = c.id`", "drop `t.version = c.v`", "drop `t.status = 0`");
    assertThat(descriptions).filteredOn(d -> d.startsWith("`=` -> `<>` in")).hasSize(3);
    assertThat(SqlMutations.of(sql))
        .filteredOn(m -> m.description().equals("drop `t.version = c.v`"))
        .singleElement()
        .satisfies(
            m ->
                assertThat(m.sql())
                    .isEqualTo(
                        "DELETE FROM lm1 t USING unnest(?::bigint[], ?::bigint[]) AS c(id, v)"
                            + " WHERE t.id = c.id AND 1 = 1 AND t.status = 0"));
    // casts (::) and the comparisons' own characters are no further points: 3 drops, 3 flips
    assertThat(descriptions).hasSize(6);
  }

  @Test
  void aDroppedConjunctKeepsItsBindParameters() {
    assertThat(SqlMutations.of("SELECT id FROM lm1 m WHERE m.biz_type = ? AND m.status = 0"))
        .filteredOn(m -> m.description().equals("drop `m.biz_type = ?`"))
        .singleElement()
        .satisfies(
            m ->
                assertThat(m.sql())
                    .isEqualTo("SELECT id FROM lm1 m WHERE (1 = 1 OR ? IS NULL) AND m.status = 0"));
  }

  @Test
  void aConjunctInParenthesesIsDroppedWholeAndSetListsKeepTheirEqualsSigns() {
    String sql =
        "UPDATE lm1 SET a = a + 1, b = ? WHERE x = ? AND (y = 0 OR z < 3)"
            + " ORDER BY id LIMIT 5 FOR UPDATE SKIP LOCKED";
    List<SqlMutations.Mutation> ms = SqlMutations.of(sql);
    List<String> descriptions = ms.stream().map(SqlMutations.Mutation::description).toList();
    assertThat(descriptions)
        .contains(
            "drop `(y = 0 OR z < 3)`",
            "drop assignment `a = a + 1`",
            "drop assignment `b = ?`",
            "drop `FOR UPDATE SKIP LOCKED`",
            "drop `SKIP LOCKED`",
            "`LIMIT 5` -> `LIMIT (5) + 1`",
            "drop `ORDER BY id`")
        .noneMatch(d -> d.startsWith("`=` -> `<>` in `UPDATE"));
    assertThat(ms)
        .filteredOn(m -> m.description().equals("drop assignment `a = a + 1`"))
        .singleElement()
        .satisfies(
            m ->
                assertThat(m.sql())
                    .startsWith("UPDATE lm1 SET  b = ? WHERE x = ? AND (y = 0 OR z < 3)"));
  }

  @Test
  void theBranchesOfAUnionAllAreMutatedTogetherAsTheLoopThatBuildsThem() {
    String sql =
        "WITH due AS (SELECT id FROM lm1 m WHERE m.biz_type = ? AND m.status = 0 LIMIT 8"
            + " UNION ALL SELECT id FROM lm1 m WHERE m.biz_type = ? AND m.status = 0 LIMIT 3)"
            + " UPDATE lm1 t SET version = t.version + 1, lease_owner = ? FROM due WHERE t.id = due.id";
    List<SqlMutations.Mutation> ms = SqlMutations.of(sql);
    assertThat(ms)
        .filteredOn(m -> m.description().equals("drop `m.status = 0`"))
        .singleElement()
        .satisfies(m -> assertThat(m.sql()).isEqualTo(sql.replace("m.status = 0", "1 = 1")));
    // the limits differ in number only: one mutant raises both
    assertThat(ms)
        .filteredOn(m -> m.description().startsWith("`LIMIT"))
        .singleElement()
        .satisfies(m -> assertThat(m.sql()).contains("LIMIT (8) + 1", "LIMIT (3) + 1"));
    // points outside the branches stay one each, comparisons are named by their own text
    assertThat(ms).filteredOn(m -> m.description().equals("drop `t.id = due.id`")).hasSize(1);
    assertThat(ms)
        .filteredOn(m -> m.description().equals("`=` -> `<>` in `m.status = 0`"))
        .singleElement()
        .satisfies(
            m -> assertThat(m.sql()).contains("m.status <> 0 LIMIT 8", "m.status <> 0 LIMIT 3"));
  }
}
