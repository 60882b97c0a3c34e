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

  @Test
  void detectionPicksTheDialectFromTheProductNameTheDriverReports() throws Exception {
    assertThat(Dialects.detect(reporting("PostgreSQL")).name()).isEqualTo("postgresql");
    assertThat(Dialects.detect(reporting("MySQL")).name()).isEqualTo("mysql");
    assertThat(Dialects.detect(reporting("MariaDB")).name()).isEqualTo("mysql");
    assertThat(Dialects.detect(reporting("H2")).name()).isEqualTo("h2");
    assertThatThrownBy(() -> Dialects.detect(reporting("Oracle")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'Oracle'")
        .hasMessageContaining("pass a Dialect to the builder");
  }

  /** A connection whose metadata names {@code product}: no such server is needed to detect it. */
  private static java.sql.Connection reporting(String product) {
    java.sql.DatabaseMetaData md =
        (java.sql.DatabaseMetaData)
            java.lang.reflect.Proxy.newProxyInstance(
                DialectsTest.class.getClassLoader(),
                new Class<?>[] {java.sql.DatabaseMetaData.class},
                (p, m, a) -> {
                  if (m.getName().equals("getDatabaseProductName")) {
                    return product;
                  }
                  throw new UnsupportedOperationException(m.getName());
                });
    return (java.sql.Connection)
        java.lang.reflect.Proxy.newProxyInstance(
            DialectsTest.class.getClassLoader(),
            new Class<?>[] {java.sql.Connection.class},
            (p, m, a) -> {
              if (m.getName().equals("getMetaData")) {
                return md;
              }
              throw new UnsupportedOperationException(m.getName());
            });
  }
}
