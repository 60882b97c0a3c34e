package io.localmessage.spring.internal;

import java.lang.reflect.Type;
import java.util.Objects;
import tools.jackson.databind.ObjectMapper;

/** JSON payloads through the application's Jackson 3 mapper. Not API. */
public final class JacksonPayloadConverter implements PayloadConverter {
  private final ObjectMapper mapper;

  public JacksonPayloadConverter(ObjectMapper mapper) {
    this.mapper = Objects.requireNonNull(mapper, "mapper");
  }

  @Override
  public Object read(byte[] payload, Type type) {
    return mapper.readValue(payload, mapper.constructType(type));
  }
}
