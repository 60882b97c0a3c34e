package io.localmessage.spring.internal;

import io.localmessage.AsyncHandler;
import io.localmessage.BatchHandler;
import io.localmessage.Handler;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.spring.HandlerRegistration;
import io.localmessage.spring.LocalMessageHandler;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.autoproxy.AutoProxyUtils;
import org.springframework.aop.scope.ScopedProxyUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Finds the {@link LocalMessageHandler} beans and methods once every singleton exists, refuses two
 * handlers for one biz type, and registers them all with the engine before its workers start (the
 * engine seals its configuration at start). Not API.
 */
public final class HandlerBeanRegistrar implements SmartInitializingSingleton, BeanFactoryAware {
  private static final Logger log = LoggerFactory.getLogger(HandlerBeanRegistrar.class);

  private final LocalMessages engine;
  private final TypeConfigs configs;
  private final ObjectProvider<PayloadConverter> converter;
  private ConfigurableListableBeanFactory beanFactory;
  private volatile Map<String, String> registered = Map.of();

  /** One handler found: where it came from and how to build it. */
  private record Found(
      String bizType,
      String beanName,
      Method method,
      HandlerRegistration registration,
      String description) {}

  public HandlerBeanRegistrar(
      LocalMessages engine, TypeConfigs configs, ObjectProvider<PayloadConverter> converter) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.configs = Objects.requireNonNull(configs, "configs");
    this.converter = Objects.requireNonNull(converter, "converter");
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.beanFactory = (ConfigurableListableBeanFactory) beanFactory;
  }

  /** Biz type to the handler registered for it by this registrar, e.g. for diagnostics. */
  public Map<String, String> registered() {
    return registered;
  }

  @Override
  public void afterSingletonsInstantiated() {
    Map<String, Found> byType = new LinkedHashMap<>();
    for (Found f : scan()) {
      Found other = byType.putIfAbsent(f.bizType, f);
      if (other != null) {
        throw new IllegalStateException(
            "biz type '"
                + f.bizType
                + "' has two handlers: "
                + other.description
                + " and "
                + f.description
                + ". A biz type has exactly one handler per application.");
      }
    }
    PayloadConverter json = converter.getIfAvailable();
    Map<String, String> done = new LinkedHashMap<>();
    for (Found f : byType.values()) {
      register(f, json);
      done.put(f.bizType, f.description);
    }
    registered = Map.copyOf(done);
    List<String> unused =
        configs.configuredTypes().stream().filter(t -> !done.containsKey(t)).sorted().toList();
    for (String t : unused) {
      log.warn(
          "event=type_config_without_handler biz_type={} hint=no @LocalMessageHandler for it in"
              + " this application, so localmessage.types[{}] has no effect here",
          t,
          t);
    }
    if (!done.isEmpty()) {
      log.info("event=handlers_registered types={}", done.keySet());
    }
  }

  private List<Found> scan() {
    List<Found> found = new ArrayList<>();
    for (String name : beanFactory.getBeanNamesForType(HandlerRegistration.class, false, true)) {
      HandlerRegistration r = beanFactory.getBean(name, HandlerRegistration.class);
      found.add(new Found(r.bizType(), name, null, r, "bean '" + name + "' (HandlerRegistration)"));
    }
    for (String name : beanFactory.getBeanNamesForType(Object.class, false, true)) {
      if (ScopedProxyUtils.isScopedTarget(name)) {
        continue;
      }
      Class<?> type;
      try {
        type = AutoProxyUtils.determineTargetClass(beanFactory, name);
      } catch (RuntimeException e) {
        continue; // an unresolvable bean type cannot carry our annotation
      }
      if (type == null) {
        continue;
      }
      LocalMessageHandler onBean =
          beanFactory.findAnnotationOnBean(name, LocalMessageHandler.class);
      if (onBean != null) {
        found.add(
            new Found(
                checkType(onBean.value(), "bean '" + name + "'"),
                name,
                null,
                null,
                "bean '" + name + "' (" + type.getName() + ")"));
      }
      if (!AnnotationUtils.isCandidateClass(type, LocalMessageHandler.class)) {
        continue;
      }
      Map<Method, LocalMessageHandler> methods =
          MethodIntrospector.selectMethods(
              type,
              (MethodIntrospector.MetadataLookup<LocalMessageHandler>)
                  m ->
                      // on a @Bean method it names the bean it creates, handled above
                      AnnotatedElementUtils.hasAnnotation(m, Bean.class)
                          ? null
                          : AnnotatedElementUtils.findMergedAnnotation(
                              m, LocalMessageHandler.class));
      methods.entrySet().stream()
          .sorted(Map.Entry.comparingByKey(java.util.Comparator.comparing(Method::toString)))
          .forEach(
              e -> {
                String description = "bean '" + name + "' method " + signature(type, e.getKey());
                found.add(
                    new Found(
                        checkType(e.getValue().value(), description),
                        name,
                        e.getKey(),
                        null,
                        description));
              });
    }
    return found;
  }

  private static int kinds(Object bean) {
    return (bean instanceof Handler ? 1 : 0)
        + (bean instanceof BatchHandler ? 1 : 0)
        + (bean instanceof AsyncHandler ? 1 : 0);
  }

  private void register(Found f, PayloadConverter json) {
    HandlerRegistration r = f.registration;
    HandlerConfig config =
        r != null ? configs.configFor(f.bizType, r.config()) : configs.configFor(f.bizType);
    try {
      Object bean = r != null ? r : beanFactory.getBean(f.beanName);
      if (r != null && r.handler() != null) {
        engine.register(f.bizType, r.handler(), config);
      } else if (r != null && r.batchHandler() != null) {
        engine.registerBatch(f.bizType, r.batchHandler(), config);
      } else if (r != null) {
        engine.registerAsync(f.bizType, r.asyncHandler(), config);
      } else if (f.method != null) {
        engine.register(f.bizType, MethodHandler.of(bean, f.method, json, f.description), config);
      } else if (kinds(bean) > 1) {
        throw new IllegalStateException(
            f.description
                + " implements more than one of Handler, BatchHandler and AsyncHandler: implement"
                + " one, or declare a HandlerRegistration bean (of, batch or async) that says which"
                + " to use");
      } else if (bean instanceof AsyncHandler a) {
        engine.registerAsync(f.bizType, a, config);
      } else if (bean instanceof Handler h) {
        engine.register(f.bizType, h, config);
      } else if (bean instanceof BatchHandler b) {
        engine.registerBatch(f.bizType, b, config);
      } else {
        throw new IllegalStateException(
            f.description
                + " is annotated @LocalMessageHandler(\""
                + f.bizType
                + "\") but implements none of io.localmessage.Handler,"
                + " io.localmessage.BatchHandler and io.localmessage.AsyncHandler; annotate a"
                + " method instead");
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "cannot register "
              + f.description
              + " for biz type '"
              + f.bizType
              + "': "
              + e.getMessage(),
          e);
    }
    log.debug(
        "event=handler_registered biz_type={} handler={} config={}",
        f.bizType,
        f.description,
        config);
  }

  private static String checkType(String bizType, String where) {
    try {
      return NewMessage.checkBizType(bizType);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "@LocalMessageHandler on " + where + ": " + e.getMessage(), e);
    }
  }

  private static String signature(Class<?> type, Method m) {
    return type.getSimpleName()
        + "."
        + m.getName()
        + Arrays.stream(m.getParameterTypes())
            .map(Class::getSimpleName)
            .collect(Collectors.joining(", ", "(", ")"));
  }
}
