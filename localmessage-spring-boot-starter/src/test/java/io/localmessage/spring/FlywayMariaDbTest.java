package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.Message;
import io.localmessage.NewMessage;
import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * On MariaDB Flyway's {@code {vendor}} is {@code mariadb}, but the scripts ship as {@code mysql}:
 * the README's explicit location works.
 */
class FlywayMariaDbTest {
  static final List<String> SEEN = new CopyOnWriteArrayList<>();

  @Configuration(proxyBeanMethods = false)
  static class Handlers {
    @LocalMessageHandler("fw.note")
    void note(Message m) {
      SEEN.add(m.idemKey());
    }
  }

  @Test
  void theMysqlScriptsMigrateMariaDb() {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.MARIADB)) {
      DataSource check = db.dataSource(1);
      Contexts.runner(db)
          .withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
          .withUserConfiguration(Handlers.class)
          .withPropertyValues(
              "localmessage.schema.initialize=false",
              "spring.flyway.locations=classpath:db/localmessage/mysql")
          .run(
              ctx -> {
                assertThat(ctx).hasNotFailed();
                assertThat(
                        Sql.count(
                            check,
                            "SELECT COUNT(*) FROM flyway_schema_history WHERE script = ?",
                            "V1__localmessage.sql"))
                    .isEqualTo(1);
                // the later step: exact (binary) keys and the requeue time
                assertThat(
                        Sql.count(
                            check,
                            "SELECT COUNT(*) FROM flyway_schema_history WHERE script = ?"
                                + " AND success = 1",
                            "V3__localmessage_keys_requeue.sql"))
                    .isEqualTo(1);
                TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
                ctx.getBean(TransactionTemplate.class)
                    .executeWithoutResult(
                        s -> messages.save(NewMessage.action("fw.note", "n1").build()));
                ctx.getBean(TransactionTemplate.class)
                    .executeWithoutResult(
                        s -> messages.save(NewMessage.action("fw.note", "n1 ").build()));
                await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> SEEN.contains("n1") && SEEN.contains("n1 "));
              });
    }
  }
}
