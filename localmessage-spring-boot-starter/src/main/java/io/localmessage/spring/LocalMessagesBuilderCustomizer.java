package io.localmessage.spring;

import io.localmessage.LocalMessagesBuilder;

/**
 * Adjusts the auto-configured {@link LocalMessagesBuilder} after the {@code localmessage.*}
 * properties are applied and before {@code build()}: a listener, an error redactor, a dialect.
 * Declare one or more as beans; they run in {@code @Order}.
 */
@FunctionalInterface
public interface LocalMessagesBuilderCustomizer {
  void customize(LocalMessagesBuilder builder);
}
