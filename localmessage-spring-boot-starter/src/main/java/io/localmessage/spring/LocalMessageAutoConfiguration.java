package io.localmessage.spring;

import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.spring.internal.EngineLifecycle;
import io.localmessage.spring.internal.HandlerBeanRegistrar;
import io.localmessage.spring.internal.JacksonPayloadConverter;
import io.localmessage.spring.internal.PayloadConverter;
import io.localmessage.spring.internal.TypeConfigs;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
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
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnClass(LocalMessages.class)
@ConditionalOnBooleanProperty(name = "localmessage.enabled", matchIfMissing = true)
@ConditionalOnSingleCandidate(DataSource.class)
@EnableConfigurationProperties(LocalMessageProperties.class)
public final class LocalMessageAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @DependsOnDatabaseInitialization
  public LocalMessages localMessages(
      DataSource dataSource,
      LocalMessageProperties properties,
      Environment environment,
      ObjectProvider<LocalMessagesBuilderCustomizer> customizers) {
    TypeConfigs.checkPropertyNames(environment);
    LocalMessagesBuilder b =
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
            .autoCreateSchema(properties.getSchema().isInitialize());
    if (properties.getDefaultMaxAttempts() != null) {
      b.defaultMaxAttempts(properties.getDefaultMaxAttempts());
    }
    if (properties.getReplicaId() != null && !properties.getReplicaId().isBlank()) {
      b.replicaId(properties.getReplicaId());
    }
    customizers.orderedStream().forEach(c -> c.customize(b));
    return b.build();
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

  /** The engine's meters on the application's registry. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static final class Metrics {
    @Bean
    LocalMessagesBuilderCustomizer localMessageMeters(ObjectProvider<MeterRegistry> registry) {
      return b -> registry.ifUnique(b::meterRegistry);
    }
  }
}
