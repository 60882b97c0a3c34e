package io.localmessage.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.console.internal.ActivityRecorder;
import io.localmessage.console.internal.ConsoleSecurityConfiguration;
import io.localmessage.spring.LocalMessageAutoConfiguration;
import io.localmessage.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration;
import org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration;
import org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.security.web.SecurityFilterChain;

/** When the console is there, and that adding it leaves the application's own security alone. */
class AutoConfigurationTest {
  private static TestDatabase db;

  private static final AutoConfigurations BASE =
      AutoConfigurations.of(
          DataSourceAutoConfiguration.class,
          DataSourceTransactionManagerAutoConfiguration.class,
          TransactionAutoConfiguration.class,
          LocalMessageAutoConfiguration.class,
          LocalMessageConsoleAutoConfiguration.class);

  @BeforeAll
  static void database() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }

  @AfterAll
  static void drop() {
    db.close();
  }

  private static WebApplicationContextRunner web() {
    return new WebApplicationContextRunner()
        .withConfiguration(BASE)
        .withConfiguration(
            AutoConfigurations.of(
                WebMvcAutoConfiguration.class,
                SecurityAutoConfiguration.class,
                ServletWebSecurityAutoConfiguration.class,
                UserDetailsServiceAutoConfiguration.class))
        .withPropertyValues(Sql.datasource(db))
        .withPropertyValues(
            "localmessage.schema.initialize=true", "localmessage.auto-startup=false");
  }

  @Test
  void offUnlessEnabled() {
    web()
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean("localMessageConsoleRoutes");
              assertThat(ctx).doesNotHaveBean(ConsoleSecurityConfiguration.CHAIN);
              assertThat(ctx).doesNotHaveBean(ActivityRecorder.class);
            });
    web()
        .withPropertyValues("localmessage.console.enabled=false")
        .run(ctx -> assertThat(ctx).doesNotHaveBean("localMessageConsoleRoutes"));
  }

  @Test
  void enabledItAddsItsChainWithoutDisplacingBootsDefaultOne() {
    web()
        .withPropertyValues("localmessage.console.enabled=true")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).hasBean("localMessageConsoleRoutes");
              assertThat(ctx.getBeansOfType(SecurityFilterChain.class))
                  .containsOnlyKeys(
                      ConsoleSecurityConfiguration.CHAIN, "defaultSecurityFilterChain");
              assertThat(ctx.getBean(ActivityRecorder.class).installed()).isTrue();
            });
  }

  @Test
  void anApplicationChainOfTheSameNameReplacesTheConsolesChain() {
    web()
        .withPropertyValues("localmessage.console.enabled=true")
        .withBean(
            ConsoleSecurityConfiguration.CHAIN,
            SecurityFilterChain.class,
            () ->
                new org.springframework.security.web.DefaultSecurityFilterChain(
                    r -> r.getRequestURI().startsWith("/localmessage")))
        .run(
            ctx ->
                assertThat(ctx.getBeansOfType(SecurityFilterChain.class))
                    .containsOnlyKeys(ConsoleSecurityConfiguration.CHAIN));
  }

  @Test
  void notInANonWebApplication() {
    new ApplicationContextRunner()
        .withConfiguration(BASE)
        .withPropertyValues(Sql.datasource(db))
        .withPropertyValues(
            "localmessage.schema.initialize=true",
            "localmessage.auto-startup=false",
            "localmessage.console.enabled=true")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean("localMessageConsoleRoutes");
            });
  }

  @Test
  void badSettingsFailTheStartupWithTheirName() {
    web()
        .withPropertyValues("localmessage.console.enabled=true", "localmessage.console.path=/lm/")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining(
                        "localmessage.console.path must look like /localmessage"));
    web()
        .withPropertyValues("localmessage.console.enabled=true", "localmessage.console.page-size=0")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("page-size must be between 1 and 500, was 0"));
  }

  @Test
  void twoRedactorsAreAmbiguousNotIgnored() {
    web()
        .withPropertyValues("localmessage.console.enabled=true")
        .withBean("one", PayloadRedactor.class, () -> PayloadRedactor.NONE)
        .withBean("two", PayloadRedactor.class, () -> PayloadRedactor.HIDE_ALL)
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class));
  }
}
