package io.localmessage.spring;

import io.localmessage.LocalMessages;
import io.localmessage.spring.internal.LocalMessageHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code localmessage} health indicator, when the application has Spring Boot's health module
 * (the actuator starter brings it); {@code management.health.localmessage.enabled=false} turns it
 * off. Thresholds: {@code localmessage.health.*}.
 */
@AutoConfiguration(after = LocalMessageAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LocalMessages.class)
@ConditionalOnEnabledHealthIndicator("localmessage")
public final class LocalMessageHealthAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(name = "localmessageHealthIndicator")
  public HealthIndicator localmessageHealthIndicator(
      LocalMessages localMessages, LocalMessageProperties properties) {
    LocalMessageProperties.Health h = properties.getHealth();
    return new LocalMessageHealthIndicator(
        localMessages, h.getMaxOldestPendingAge(), h.getMaxDead(), h.getThresholdStatus());
  }
}
