package io.localmessage.spring.internal;

import java.lang.reflect.Type;

/** Reads a message payload into a handler method's parameter type. Not API. */
public interface PayloadConverter {
  /** Throws a runtime exception when the payload is not a valid {@code type}. */
  Object read(byte[] payload, Type type);
}
