package io.localmessage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.PermanentFailure;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The CLI as a door: its operator is whoever holds the database credentials (no anonymous or viewer
 * role exists there), so the matrix is what reaches the operator's terminal and what the operator
 * may type. Stored strings come from senders and handlers; none may carry a terminal escape
 * sequence to the screen.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractCliOutputSecurityTest {
  private static final String ESC = "\u001b]0;pwned\u0007\u001b[2J\u001b[31m";

  private TestDatabase db;
  private EngineFixture fx;
  private LocalMessages lm;
  private long id;

  protected abstract TestDatabase.Kind kind();

  @BeforeAll
  void seed() {
    db = TestDatabase.create(kind());
    fx = new EngineFixture(db.dataSource(4));
    lm = fx.build(fx.builder());
    lm.register(
        "evil.type",
        m -> {
          throw new PermanentFailure("declined " + ESC + "\rforged line\u202e");
        },
        EngineFixture.config().build());
    fx.save(
        lm,
        NewMessage.action("evil.type", "key-1")
            .aggregateId("agg-1")
            .payload(("{\"note\":\"" + ESC + "\"}").getBytes(StandardCharsets.UTF_8))
            .build());
    assertThat(lm.runOnce()).isEqualTo(1);
    id = lm.admin().listDead("evil.type", 0, 10).get(0).id();
    // what a sender could have stored before any check existed, or by writing the table directly
    Sql.update(
        db.dataSource(1),
        "UPDATE "
            + fx.table
            + " SET idem_key = ?, aggregate_id = ?, destination = ?, headers = ? WHERE id = ?",
        "key-" + ESC,
        "agg-" + ESC,
        "dest-" + ESC,
        "{\"h" + "\\u001b[1m" + "\":\"v" + "\\u001b[5m" + "\"}",
        id);
  }

  @AfterAll
  void stop() {
    fx.close();
    db.close();
  }

  private record Result(int code, String out, String err) {}

  private Result cli(String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--jdbc-url",
                db.jdbcUrl(),
                "--user",
                db.user(),
                "--table",
                fx.table,
                "--inbox-table",
                fx.table + "_inbox",
                "--operator",
                "bob"));
    all.addAll(List.of(args));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        Main.run(
            all.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));
    return new Result(code, out.toString(), err.toString());
  }

  private static void assertNoControlCharacters(String output) {
    String withoutLineEnds = output.replace("\n", "");
    assertThat(withoutLineEnds.codePoints().filter(c -> Character.isISOControl(c)).toArray())
        .as("control characters in:%n%s", output)
        .isEmpty();
    assertThat(withoutLineEnds).doesNotContain("\u202e");
  }

  @Test
  void showPrintsStoredStringsWithoutTerminalEscapes() {
    Result r = cli("show", Long.toString(id), "--payload");
    assertThat(r.code()).isZero();
    assertNoControlCharacters(r.out());
    assertThat(r.out())
        .contains("key-\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31m")
        .contains("\\u202e");
  }

  @Test
  void tablesPrintStoredStringsWithoutTerminalEscapes() {
    for (String[] args :
        new String[][] {
          {"dead", "list"}, {"find", "--aggregate", "agg-" + ESC}, {"stats"},
        }) {
      Result r = cli(args);
      assertThat(r.code()).as(String.join(" ", args)).isZero();
      assertNoControlCharacters(r.out());
    }
  }

  @Test
  void jsonOutputEscapesThemAlready() {
    Result r = cli("--json", "show", Long.toString(id));
    assertThat(r.code()).isZero();
    assertNoControlCharacters(r.out());
    assertThat(r.out()).contains("\\u001B");
  }

  @Test
  void operatorNamesAndReasonsWithControlOrBidiCharactersAreRefused() {
    for (String reason :
        new String[] {"ok\nforged=1", "ok\r", "tab\tbell\u0007", "rtl\u202eevil"}) {
      Result r = cli("pause", "evil.type", "--reason", reason);
      assertThat(r.code()).as(reason).isEqualTo(ExitCodes.USAGE);
      assertThat(r.err()).contains("reason");
    }
    Result r = cliAs("eve\u001b[8m", "pause", "evil.type", "--reason", "maintenance");
    assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err()).contains("operator");
    assertThat(lm.admin().paused()).isEmpty();
  }

  private Result cliAs(String operator, String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--jdbc-url",
                db.jdbcUrl(),
                "--user",
                db.user(),
                "--table",
                fx.table,
                "--inbox-table",
                fx.table + "_inbox",
                "--operator",
                operator));
    all.addAll(List.of(args));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        Main.run(
            all.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));
    return new Result(code, out.toString(), err.toString());
  }
}
