package io.localmessage.spring;

import io.localmessage.spring.quickstart.PointsAdded;
import io.localmessage.spring.quickstart.PointsHandler;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.NameMatchMethodPointcut;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * What the quick-start tests watch, kept out of the quick start's own classes: each call of {@link
 * PointsHandler#addPoints} with the time it started, recorded by advice on the handler bean.
 */
@Configuration(proxyBeanMethods = false)
public class QuickstartProbe {
  /** One call of the handler. */
  public record Call(PointsAdded event, long startedNanos) {}

  static final List<Call> CALLS = new CopyOnWriteArrayList<>();

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static Advisor quickstartHandlerCalls() {
    NameMatchMethodPointcut pointcut = new NameMatchMethodPointcut();
    pointcut.setMappedName("addPoints");
    pointcut.setClassFilter(PointsHandler.class::isAssignableFrom);
    MethodInterceptor record =
        invocation -> {
          CALLS.add(new Call((PointsAdded) invocation.getArguments()[0], System.nanoTime()));
          return invocation.proceed();
        };
    return new DefaultPointcutAdvisor(pointcut, record);
  }
}
