package io.localmessage.spring.internal;

import io.localmessage.Backoff;
import io.localmessage.HandlerConfig;
import io.localmessage.spring.LocalMessageProperties;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/** {@code localmessage.types.*} to {@link HandlerConfig}. Not API. */
public final class TypeConfigs {
  private static final String PREFIX = "localmessage.types";

  /** The settings of a type, in the uniform form of property names (lower case, no dashes). */
  private static final Set<String> SETTINGS =
      Set.of(
          "maxattempts",
          "concurrency",
          "timeout",
          "ordered",
          "retainsucceeded",
          "maxage",
          "batchsize",
          "retryaftercountsattempt",
          "backoff");

  private final Map<String, LocalMessageProperties.Type> types;

  public TypeConfigs(Map<String, LocalMessageProperties.Type> types) {
    this.types = Map.copyOf(types);
  }

  /** The configured biz types. */
  public Set<String> configuredTypes() {
    return types.keySet();
  }

  /** The config of {@code bizType}: its properties over the {@link HandlerConfig} defaults. */
  public HandlerConfig configFor(String bizType) {
    return configFor(bizType, HandlerConfig.defaults());
  }

  /** The config of {@code bizType}: its properties over {@code base}, setting by setting. */
  public HandlerConfig configFor(String bizType, HandlerConfig base) {
    LocalMessageProperties.Type t = types.get(bizType);
    if (t == null) {
      return base;
    }
    String at = PREFIX + "[" + bizType + "]";
    try {
      HandlerConfig.Builder b =
          HandlerConfig.builder()
              .maxAttempts(base.maxAttempts())
              .concurrency(base.concurrency())
              .backoff(base.backoff())
              .handlerTimeout(base.handlerTimeout())
              .maxAge(base.maxAge())
              .ordered(base.ordered())
              .retainSucceeded(base.retainSucceeded())
              .batchSize(base.batchSize())
              .retryAfterCountsAttempt(base.retryAfterCountsAttempt());
      if (t.getMaxAttempts() != null) {
        b.maxAttempts(t.getMaxAttempts());
      }
      if (t.getConcurrency() != null) {
        b.concurrency(t.getConcurrency());
      }
      if (t.getTimeout() != null) {
        b.handlerTimeout(t.getTimeout());
      }
      if (t.getOrdered() != null) {
        b.ordered(t.getOrdered());
      }
      if (t.getRetainSucceeded() != null) {
        b.retainSucceeded(t.getRetainSucceeded());
      }
      if (t.getMaxAge() != null) {
        b.maxAge(t.getMaxAge());
      }
      if (t.getBatchSize() != null) {
        b.batchSize(t.getBatchSize());
      }
      if (t.getRetryAfterCountsAttempt() != null) {
        b.retryAfterCountsAttempt(t.getRetryAfterCountsAttempt());
      }
      Backoff backoff = backoff(t.getBackoff(), at + ".backoff");
      if (backoff != null) {
        b.backoff(backoff);
      }
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new StartupCheckException(
          at + ": " + e.getMessage(),
          "Fix the settings of biz type '"
              + bizType
              + "' under "
              + at
              + " (the allowed values are in the starter's README, \"Per-type settings\").",
          e);
    }
  }

  private static Backoff backoff(LocalMessageProperties.Backoff p, String at) {
    boolean exponential =
        p.getInitial() != null
            || p.getMax() != null
            || p.getMultiplier() != null
            || p.getJitter() != null;
    boolean fixed = p.getFixed() != null;
    boolean schedule = p.getSchedule() != null && !p.getSchedule().isEmpty();
    int kinds = (exponential ? 1 : 0) + (fixed ? 1 : 0) + (schedule ? 1 : 0);
    if (kinds > 1) {
      throw new IllegalArgumentException(
          at
              + " sets more than one kind of backoff: choose one of initial/max/multiplier/jitter"
              + " (exponential), fixed, or schedule");
    }
    if (fixed) {
      return Backoff.fixed(p.getFixed());
    }
    if (schedule) {
      return Backoff.schedule(p.getSchedule().toArray(new Duration[0]));
    }
    if (!exponential) {
      return null;
    }
    Duration initial = p.getInitial() != null ? p.getInitial() : Duration.ofSeconds(1);
    Duration max = p.getMax() != null ? p.getMax() : Duration.ofHours(1);
    Backoff.Exponential e = Backoff.exponential(initial, max);
    if (p.getMultiplier() != null) {
      e = e.multiplier(p.getMultiplier());
    }
    if (p.getJitter() != null) {
      e = e.jitter(p.getJitter());
    }
    return e;
  }

  /**
   * Fails on a {@code localmessage.types.<key>.<setting>} whose setting is unknown, the usual sign
   * of a dotted biz type written without brackets ({@code
   * localmessage.types.points.add.max-attempts} binds to a type "points" and is otherwise silently
   * ignored).
   */
  public static void checkPropertyNames(Environment environment) {
    ConfigurationPropertyName prefix = ConfigurationPropertyName.of(PREFIX);
    for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
      if (!(source instanceof IterableConfigurationPropertySource iterable)
          || source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource) {
        // environment variables lose dots and dashes; their names cannot be checked this way
        continue;
      }
      iterable.stream()
          .filter(prefix::isAncestorOf)
          .filter(name -> name.getNumberOfElements() > 3)
          .forEach(TypeConfigs::checkName);
    }
  }

  private static void checkName(ConfigurationPropertyName name) {
    String key = name.getElement(2, Form.ORIGINAL);
    String setting = name.getElement(3, Form.UNIFORM);
    if (SETTINGS.contains(setting)) {
      return;
    }
    // the intended biz type runs up to the first element that is a setting
    int n = name.getNumberOfElements();
    int at = 3;
    while (at < n && !SETTINGS.contains(name.getElement(at, Form.UNIFORM))) {
      at++;
    }
    StringBuilder type = new StringBuilder(key);
    for (int i = 3; i < Math.min(at, n); i++) {
      type.append('.').append(name.getElement(i, Form.ORIGINAL));
    }
    StringBuilder rest = new StringBuilder();
    for (int i = at; i < n; i++) {
      rest.append('.').append(name.getElement(i, Form.ORIGINAL));
    }
    String settingPath = at < n ? rest.substring(1) : "max-attempts";
    String intended = PREFIX + "[" + type + "]." + settingPath;
    StringBuilder yaml =
        new StringBuilder("  localmessage:\n    types:\n      \"[" + type + "]\":\n");
    String[] parts = settingPath.split("\\.");
    for (int i = 0; i < parts.length; i++) {
      yaml.append("  ".repeat(i + 4)).append(parts[i]).append(':');
      yaml.append(i == parts.length - 1 ? " ...\n" : "\n");
    }
    throw new StartupCheckException(
        "Property '"
            + name
            + "' was read as biz type '"
            + key
            + "' with a setting '"
            + name.getElement(3, Form.ORIGINAL)
            + "', which does not exist: a biz type with dots needs brackets in the property"
            + " name, or Spring splits it at the dots. Meant: "
            + intended
            + "?",
        "Write the biz type in brackets: "
            + intended
            + " in a .properties file, or in YAML:\n\n"
            + yaml);
  }
}
