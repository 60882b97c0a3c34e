package io.localmessage.console.internal;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/** Matches when Spring Security's web configuration is not on the classpath. Not API. */
public final class WebSecurityAbsent extends SpringBootCondition {
  static final String CHAIN = "org.springframework.security.web.SecurityFilterChain";
  static final String HTTP =
      "org.springframework.security.config.annotation.web.builders.HttpSecurity";

  @Override
  public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata m) {
    ClassLoader cl = context.getClassLoader();
    boolean present = ClassUtils.isPresent(CHAIN, cl) && ClassUtils.isPresent(HTTP, cl);
    return present
        ? ConditionOutcome.noMatch("Spring Security (web and config) is present")
        : ConditionOutcome.match("Spring Security (web and config) is absent: token mode");
  }
}
