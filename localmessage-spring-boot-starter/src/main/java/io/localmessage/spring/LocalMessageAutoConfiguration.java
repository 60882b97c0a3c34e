package io.localmessage.spring;

import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.spi.TracePropagation;
import io.localmessage.spring.internal.EngineLifecycle;
import io.localmessage.spring.internal.HandlerBeanRegistrar;
import io.localmessage.spring.internal.JacksonPayloadConverter;
import io.localmessage.spring.internal.LibrarySchemaMigration;
import io.localmessage.spring.internal.LoopMeters;
import io.localmessage.spring.internal.PayloadConverter;
import io.localmessage.spring.internal.SchemaCheck;
import io.localmessage.spring.internal.StartupCheckException;
import io.localmessage.spring.internal.TypeConfigs;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import tools.jackson.databind.ObjectMapper;

/**
 * One {@link LocalMessages} on the application's {@link DataSource}, configured by {@code
 * localmessage.*}; a {@link TransactionalMessages} that saves in the current Spring transaction;
 * the {@link LocalMessageHandler} beans registered; workers started with the context and stopped
 * gracefully with it. {@code localmessage.enabled=false} turns it all off; an application's own
 * {@code LocalMessages} bean replaces the auto-configured one.
 */
@AutoConfiguration(
    after = DataSourceAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
    })
@ConditionalOnClass(LocalMessages.class)
@ConditionalOnBooleanProperty(name = "localmessage.enabled", matchIfMissing = true)
@ConditionalOnSingleCandidate(DataSource.class)
@EnableConfigurationProperties(LocalMessageProperties.class)
public final class LocalMessageAutoConfiguration {
  private static final Logger log = LoggerFactory.getLogger(LocalMessageAutoConfiguration.class);

  @Bean
  @ConditionalOnMissingBean
  @DependsOnDatabaseInitialization
  public LocalMessages localMessages(
      DataSource dataSource,
      LocalMessageProperties properties,
      Environment environment,
      ObjectProvider<LocalMessagesBuilderCustomizer> customizers,
      ObjectProvider<LibrarySchemaMigration> schemaMigration) {
    TypeConfigs.checkPropertyNames(environment);
    schemaMigration.ifAvailable(m -> m.migrated()); // the library's Flyway run comes first
    LocalMessageProperties.Schema schema = properties.getSchema();
    List<String> tables =
        schema.isInitialize() || schema.isVerify()
            ? SchemaCheck.tables(dataSource, properties.getTable(), properties.getInboxTable())
            : List.of();
    List<String> missingBefore =
        schema.isInitialize() || schema.isVerify()
            ? SchemaCheck.missing(dataSource, tables)
            : List.of();
    if (!schema.isInitialize() && schema.isVerify()) {
      List<String> missingEngineTables =
          missingBefore.stream().filter(t -> !t.equals(properties.getInboxTable())).toList();
      if (!missingEngineTables.isEmpty()) {
        throw schemaMissing(missingEngineTables, schemaMigration.getIfAvailable() != null);
      }
    }
    LocalMessagesBuilder b;
    try {
      b =
          LocalMessages.builder(dataSource)
              .table(properties.getTable())
              .inboxTable(properties.getInboxTable())
              .concurrency(properties.getConcurrency())
              .lease(properties.getLease())
              .maxExecutionTime(properties.getMaxExecutionTime())
              .pollInterval(properties.getPollInterval())
              .writeBackMargin(properties.getWriteBackMargin())
              .shutdownTimeout(properties.getShutdownTimeout())
              .maintenanceInterval(properties.getMaintenanceInterval())
              .loopStuckAfter(properties.getLoopStuckAfter())
              .maxPayloadBytes(properties.getMaxPayloadBytes())
              .purgeBatchSize(properties.getPurgeBatchSize())
              .writeBatchSize(properties.getWriteBatchSize())
              .wakeUps(properties.isWakeUps())
              .virtualThreads(properties.isVirtualThreads())
              .unorderedTypes(properties.getUnorderedTypes().toArray(String[]::new))
              .autoCreateSchema(schema.isInitialize());
      if (properties.getDefaultMaxAttempts() != null) {
        b.defaultMaxAttempts(properties.getDefaultMaxAttempts());
      }
      if (properties.getReplicaId() != null && !properties.getReplicaId().isBlank()) {
        b.replicaId(properties.getReplicaId());
      }
    } catch (IllegalArgumentException e) {
      throw invalidSetting(e);
    }
    customizers.orderedStream().forEach(c -> c.customize(b));
    LocalMessages engine;
    try {
      engine = b.build();
    } catch (IllegalArgumentException e) {
      throw invalidSetting(e);
    }
    if (schema.isInitialize()) {
      List<String> stillMissing = SchemaCheck.missing(dataSource, tables);
      List<String> created = missingBefore.stream().filter(t -> !stillMissing.contains(t)).toList();
      log.info(
          "event=schema_initialized created={} existing={} (existing tables are brought up to the"
              + " last schema step)",
          created,
          tables.stream().filter(t -> !missingBefore.contains(t)).toList());
    }
    return engine;
  }

  private static StartupCheckException invalidSetting(IllegalArgumentException e) {
    return new StartupCheckException(
        "Invalid localmessage setting: " + e.getMessage(),
        "Set the matching localmessage.* property to an allowed value (the table of engine"
            + " properties is in the starter's README).",
        e);
  }

  private static StartupCheckException schemaMissing(List<String> missing, boolean flywayRan) {
    return new StartupCheckException(
        "localmessage's tables "
            + missing
            + " do not exist in the application's database, so no message could be saved or"
            + " delivered."
            + (flywayRan ? "" : " Nothing created them: the starter's own Flyway run is off."),
        "Create them in one of these ways:\n"
            + "  1. localmessage.schema.initialize=true: the engine creates them at startup"
            + " (CREATE TABLE IF NOT EXISTS, with your table names).\n"
            + "  2. Flyway on the classpath (spring-boot-starter-flyway, plus"
            + " flyway-database-postgresql or flyway-mysql): the starter migrates them from"
            + " classpath:db/localmessage/<postgresql|mysql|h2> in their own history table"
            + " localmessage_schema_history, apart from your migrations. Or add that location to"
            + " your spring.flyway.locations (its versions 1 to 3 then share your history).\n"
            + "  3. Your own migrations: LocalMessages.schemaDdl() prints every statement.\n"
            + "(localmessage.schema.verify=false skips this check.)");
  }

  @Bean
  @ConditionalOnMissingBean
  public TransactionalMessages transactionalMessages(
      LocalMessages localMessages, DataSource dataSource) {
    return new TransactionalMessages(localMessages, dataSource);
  }

  @Bean
  public TypeConfigs localMessageTypeConfigs(LocalMessageProperties properties) {
    return new TypeConfigs(properties.getTypes());
  }

  @Bean
  public HandlerBeanRegistrar localMessageHandlerRegistrar(
      LocalMessages localMessages,
      TypeConfigs localMessageTypeConfigs,
      ObjectProvider<PayloadConverter> converter) {
    return new HandlerBeanRegistrar(localMessages, localMessageTypeConfigs, converter);
  }

  @Bean
  public EngineLifecycle localMessageLifecycle(
      LocalMessages localMessages, LocalMessageProperties properties) {
    return new EngineLifecycle(localMessages, properties.isAutoStartup());
  }

  /**
   * The library's tables migrated by Flyway in their own history table, when Flyway is on the
   * classpath: see {@link LocalMessageProperties.SchemaFlyway}.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.flywaydb.core.Flyway")
  static final class FlywaySchema {
    @Bean
    @DependsOnDatabaseInitialization // after the application's own Flyway or Liquibase
    LibrarySchemaMigration localMessageSchemaMigration(
        DataSource dataSource, LocalMessageProperties properties, Environment environment) {
      return LibrarySchemaMigration.run(dataSource, properties, environment);
    }
  }

  /** Handler method payloads read with the application's Jackson 3 mapper. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(ObjectMapper.class)
  static final class JacksonPayloads {
    @Bean
    PayloadConverter localMessagePayloadConverter(ObjectProvider<ObjectMapper> mapper) {
      return new JacksonPayloadConverter(
          mapper.getIfAvailable(() -> tools.jackson.databind.json.JsonMapper.builder().build()));
    }
  }

  /**
   * The engine's saves and handlers traced on the application's {@code ObservationRegistry}: an
   * application-defined {@link TracePropagation} bean replaces this one; {@code
   * localmessage.tracing.enabled=false} turns it off. Give the same bean to the Kafka relay and
   * consumer and to HTTP delivery.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(ObservationRegistry.class)
  @ConditionalOnBooleanProperty(name = "localmessage.tracing.enabled", matchIfMissing = true)
  static final class Tracing {
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(ObservationRegistry.class)
    TracePropagation localMessageTracePropagation(ObservationRegistry registry) {
      return TracePropagation.observation(registry);
    }

    @Bean
    LocalMessagesBuilderCustomizer localMessageTracing(ObjectProvider<TracePropagation> tracing) {
      return b -> tracing.ifUnique(b::tracing);
    }
  }

  /** The engine's meters on the application's registry. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static final class Metrics {
    @Bean
    LocalMessagesBuilderCustomizer localMessageMeters(ObjectProvider<MeterRegistry> registry) {
      return b -> registry.ifUnique(b::meterRegistry);
    }

    @Bean
    LoopMeters localMessageLoopMeters(LocalMessages localMessages) {
      return new LoopMeters(localMessages);
    }
  }
}
