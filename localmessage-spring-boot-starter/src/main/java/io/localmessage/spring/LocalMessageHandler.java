package io.localmessage.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Names the biz type a bean handles. The starter registers every such handler with the engine
 * before the workers start; per-type settings come from {@code localmessage.types[<biz-type>].*}.
 *
 * <ul>
 *   <li>On a bean method: the method is the handler. Its parameters are a {@link
 *       io.localmessage.Message} and/or one payload parameter: {@code byte[]} (raw), {@code String}
 *       (UTF-8 text) or any other type, read from the JSON payload with the application's Jackson
 *       {@code JsonMapper}. A payload that cannot be read is a permanent failure (the message goes
 *       DEAD at once). Returning normally is success; exceptions mean what they mean for {@link
 *       io.localmessage.Handler}.
 *   <li>On a bean class, or on a {@code @Bean} method, whose bean implements {@link
 *       io.localmessage.Handler} or {@link io.localmessage.BatchHandler}: that bean is the handler.
 * </ul>
 *
 * <p>Two handlers for one biz type fail the application's startup with both bean names.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LocalMessageHandler {
  /** The biz type, e.g. {@code points.add}. */
  String value();
}
