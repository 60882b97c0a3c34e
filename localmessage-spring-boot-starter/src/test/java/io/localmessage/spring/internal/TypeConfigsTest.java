package io.localmessage.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.Backoff;
import io.localmessage.HandlerConfig;
import io.localmessage.spring.LocalMessageProperties;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TypeConfigsTest {

  @Test
  void everyTypeSettingMapsToTheHandlerConfig() {
    LocalMessageProperties.Type t = new LocalMessageProperties.Type();
    t.setMaxAttempts(7);
    t.setConcurrency(3);
    t.setTimeout(Duration.ofSeconds(12));
    t.setOrdered(true);
    t.setRetainSucceeded(Duration.ofHours(2));
    t.setMaxAge(Duration.ofDays(1));
    t.setBatchSize(40);
    t.setRetryAfterCountsAttempt(true);
    t.getBackoff().setFixed(Duration.ofSeconds(9));

    HandlerConfig c = new TypeConfigs(Map.of("a.b", t)).configFor("a.b");

    assertThat(c.maxAttempts()).isEqualTo(7);
    assertThat(c.concurrency()).isEqualTo(3);
    assertThat(c.handlerTimeout()).isEqualTo(Duration.ofSeconds(12));
    assertThat(c.ordered()).isTrue();
    assertThat(c.retainSucceeded()).isEqualTo(Duration.ofHours(2));
    assertThat(c.maxAge()).isEqualTo(Duration.ofDays(1));
    assertThat(c.batchSize()).isEqualTo(40);
    assertThat(c.retryAfterCountsAttempt()).isTrue();
    assertThat(c.backoff().toString()).isEqualTo("fixed(PT9S)");
  }

  @Test
  void unsetSettingsAndUnknownTypesKeepTheDefaults() {
    HandlerConfig defaults = HandlerConfig.defaults();
    TypeConfigs configs = new TypeConfigs(Map.of("a.b", new LocalMessageProperties.Type()));
    for (HandlerConfig c : List.of(configs.configFor("a.b"), configs.configFor("other"))) {
      assertThat(c.toString()).isEqualTo(defaults.toString());
    }
  }

  @Test
  void propertiesOverrideACodeConfigSettingBySetting() {
    HandlerConfig base = HandlerConfig.builder().maxAttempts(4).ordered(true).batchSize(7).build();
    LocalMessageProperties.Type t = new LocalMessageProperties.Type();
    t.setConcurrency(2);
    t.setBatchSize(9);

    HandlerConfig c = new TypeConfigs(Map.of("k.r", t)).configFor("k.r", base);

    assertThat(c.maxAttempts()).isEqualTo(4);
    assertThat(c.ordered()).isTrue();
    assertThat(c.concurrency()).isEqualTo(2);
    assertThat(c.batchSize()).isEqualTo(9);
    assertThat(new TypeConfigs(Map.of()).configFor("k.r", base)).isSameAs(base);
  }

  @Test
  void backoffKinds() {
    LocalMessageProperties.Type schedule = new LocalMessageProperties.Type();
    schedule.getBackoff().setSchedule(List.of(Duration.ofMinutes(1), Duration.ofMinutes(5)));
    Backoff s = new TypeConfigs(Map.of("s", schedule)).configFor("s").backoff();
    assertThat(s.delayAfter(1)).isEqualTo(Duration.ofMinutes(1));
    assertThat(s.delayAfter(9)).isEqualTo(Duration.ofMinutes(5));

    LocalMessageProperties.Type exp = new LocalMessageProperties.Type();
    exp.getBackoff().setInitial(Duration.ofSeconds(2));
    exp.getBackoff().setMax(Duration.ofSeconds(30));
    exp.getBackoff().setMultiplier(3.0);
    exp.getBackoff().setJitter(0.0);
    Backoff e = new TypeConfigs(Map.of("e", exp)).configFor("e").backoff();
    assertThat(e.delayAfter(1)).isEqualTo(Duration.ofSeconds(2));
    assertThat(e.delayAfter(2)).isEqualTo(Duration.ofSeconds(6));
    assertThat(e.delayAfter(5)).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void twoBackoffKindsAreRefused() {
    LocalMessageProperties.Type t = new LocalMessageProperties.Type();
    t.getBackoff().setFixed(Duration.ofSeconds(1));
    t.getBackoff().setSchedule(List.of(Duration.ofMinutes(1)));
    assertThatThrownBy(() -> new TypeConfigs(Map.of("x.y", t)).configFor("x.y"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("localmessage.types[x.y].backoff sets more than one kind");
  }

  @Test
  void aBadValueNamesItsProperty() {
    LocalMessageProperties.Type t = new LocalMessageProperties.Type();
    t.setMaxAttempts(0);
    assertThatThrownBy(() -> new TypeConfigs(Map.of("x.y", t)).configFor("x.y"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("localmessage.types[x.y]: maxAttempts must be between 1 and 1000, was 0");
  }
}
