package io.localmessage.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What a user who names the dialect instead of letting it be detected gets. */
class DialectsTest {

  @Test
  void theBuiltInDialectsAreFoundByTheirNamesAndAliasesInAnyCase() {
    assertThat(Dialects.named("h2").name()).isEqualTo("h2");
    assertThat(Dialects.named("PostgreSQL").name()).isEqualTo("postgresql");
    assertThat(Dialects.named("postgres").name()).isEqualTo("postgresql");
    assertThat(Dialects.named("mysql").name()).isEqualTo("mysql");
    assertThat(Dialects.named("MariaDB").name()).isEqualTo("mysql");
    // the name is also the folder of the schema scripts a migration tool runs
    assertThat(Dialects.named("H2").schemaResource())
        .isEqualTo("db/localmessage/h2/V1__localmessage.sql");
  }

  @Test
  void anUnknownNameIsRefusedWithTheNamesThatExist() {
    assertThatThrownBy(() -> Dialects.named("oracle"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'oracle'")
        .hasMessageContaining("postgresql, mysql, mariadb or h2");
    assertThatThrownBy(() -> Dialects.named(null)).isInstanceOf(IllegalArgumentException.class);
  }
}
