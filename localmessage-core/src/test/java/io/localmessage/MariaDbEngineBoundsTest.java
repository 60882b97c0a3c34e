package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/** The engine's bounds on MariaDB, sessions in a non-UTC zone. */
class MariaDbEngineBoundsTest extends AbstractEngineBoundsTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.MARIADB, "+05:30");
  }

  /**
   * A payload limit past what the server takes in one statement is refused at build, naming both
   * settings: with {@code maxPayloadBytes} at 32 MiB a 20 MiB save passed the library's check and
   * killed the connection on MariaDB's {@code max_allowed_packet} (16 MiB by default). At the
   * largest limit the build allows, the worst payload for a driver that escapes binary into the
   * statement (every byte a zero) is saved.
   */
  @Test
  void aPayloadLimitPastTheServersStatementLimitIsRefusedAtBuild() {
    long packet = Sql.count(ds, "SELECT @@max_allowed_packet");
    int fits = (int) ((packet - 64 * 1024) / 2);
    assertThatThrownBy(() -> fx.builder().maxPayloadBytes(32 * 1024 * 1024).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "maxPayloadBytes 33554432 does not fit the database's max_allowed_packet of " + packet)
        .hasMessageContaining("Set maxPayloadBytes to at most " + fits);
    LocalMessages lm = fx.build(fx.builder().maxPayloadBytes(fits));
    SaveResult saved = fx.save(lm, NewMessage.action("t.big", "k").payload(new byte[fits]).build());
    assertThat(fx.count("id = ? AND LENGTH(payload) = ?", saved.id(), fits)).isEqualTo(1);
  }
}
