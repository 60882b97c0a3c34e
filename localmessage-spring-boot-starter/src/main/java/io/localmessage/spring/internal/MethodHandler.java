package io.localmessage.spring.internal;

import io.localmessage.Handler;
import io.localmessage.Message;
import io.localmessage.PermanentFailure;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;

/**
 * A {@code @LocalMessageHandler} method as a {@link Handler}: a {@link Message} parameter gets the
 * message, the other parameter (at most one) its payload as {@code byte[]}, UTF-8 {@code String} or
 * a JSON-read object. Not API.
 */
final class MethodHandler implements Handler {
  private enum Kind {
    MESSAGE,
    BYTES,
    TEXT,
    JSON
  }

  private final Object bean;
  private final Method method;
  private final Kind[] kinds;
  private final Type payloadType;
  private final PayloadConverter converter;
  private final String description;

  private MethodHandler(
      Object bean,
      Method method,
      Kind[] kinds,
      Type payloadType,
      PayloadConverter converter,
      String description) {
    this.bean = bean;
    this.method = method;
    this.kinds = kinds;
    this.payloadType = payloadType;
    this.converter = converter;
    this.description = description;
  }

  /**
   * Checks the method's signature. {@code converter} may be null when Jackson is absent; then only
   * {@code Message}, {@code byte[]} and {@code String} parameters are accepted.
   */
  static MethodHandler of(
      Object bean, Method method, PayloadConverter converter, String description) {
    Class<?>[] types = method.getParameterTypes();
    if (types.length == 0 || types.length > 2) {
      throw new IllegalStateException(
          description
              + " must take a Message, a payload parameter, or both; it takes "
              + types.length
              + " parameters");
    }
    Kind[] kinds = new Kind[types.length];
    Type payloadType = null;
    int payloads = 0;
    for (int i = 0; i < types.length; i++) {
      Class<?> t = types[i];
      if (Message.class.equals(t)) {
        kinds[i] = Kind.MESSAGE;
        continue;
      }
      payloads++;
      if (byte[].class.equals(t)) {
        kinds[i] = Kind.BYTES;
      } else if (String.class.equals(t)) {
        kinds[i] = Kind.TEXT;
      } else {
        if (converter == null) {
          throw new IllegalStateException(
              description
                  + " takes a "
                  + t.getName()
                  + " payload, which needs Jackson (tools.jackson.databind) on the classpath;"
                  + " add spring-boot-starter-jackson or take byte[], String or Message");
        }
        kinds[i] = Kind.JSON;
        payloadType = method.getGenericParameterTypes()[i];
      }
    }
    if (payloads > 1) {
      throw new IllegalStateException(
          description + " has " + payloads + " payload parameters; at most one is allowed");
    }
    if (payloads == 0 && types.length == 2) {
      throw new IllegalStateException(description + " takes two Message parameters");
    }
    // the bean may be a proxy (@Transactional handler): call through it, on its own method
    Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
    ReflectionUtils.makeAccessible(invocable);
    return new MethodHandler(bean, invocable, kinds, payloadType, converter, description);
  }

  @Override
  public void handle(Message message) throws Exception {
    Object[] args = new Object[kinds.length];
    for (int i = 0; i < kinds.length; i++) {
      args[i] =
          switch (kinds[i]) {
            case MESSAGE -> message;
            case BYTES -> message.payload();
            case TEXT -> new String(message.payload(), StandardCharsets.UTF_8);
            case JSON -> read(message);
          };
    }
    try {
      method.invoke(bean, args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Exception ex) {
        throw ex;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  private Object read(Message message) throws PermanentFailure {
    try {
      return converter.read(message.payload(), payloadType);
    } catch (RuntimeException e) {
      // a payload that cannot be read now never will: retrying only delays the dead letter
      throw new PermanentFailure(
          "payload of ticket "
              + message.id()
              + " is not a valid "
              + payloadType.getTypeName()
              + " for "
              + description
              + ": "
              + e.getClass().getSimpleName(),
          e);
    }
  }

  @Override
  public String toString() {
    return description;
  }
}
