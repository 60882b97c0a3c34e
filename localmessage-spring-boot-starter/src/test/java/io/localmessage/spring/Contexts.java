package io.localmessage.spring;

import io.localmessage.testing.TestDatabase;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

/** Application contexts with the starter on a test database, JDBC transactions and Jackson. */
final class Contexts {
  private Contexts() {}

  static final AutoConfigurations STARTER =
      AutoConfigurations.of(
          LocalMessageAutoConfiguration.class,
          LocalMessageHealthAutoConfiguration.class,
          LocalMessageEndpointAutoConfiguration.class);

  /**
   * The starter with the tables created at startup and a 10 s poll interval: a delivery seen within
   * a few seconds of a commit came from the after-commit path.
   */
  static ApplicationContextRunner runner(TestDatabase db) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class,
                DataSourceTransactionManagerAutoConfiguration.class,
                TransactionAutoConfiguration.class,
                JacksonAutoConfiguration.class))
        .withConfiguration(STARTER)
        .withPropertyValues(Sql.datasource(db))
        .withPropertyValues(
            "localmessage.schema.initialize=true",
            "localmessage.poll-interval=10s",
            "localmessage.shutdown-timeout=2s");
  }
}
