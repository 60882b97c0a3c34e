package io.localmessage.spring;

import io.localmessage.AsyncHandler;
import io.localmessage.BatchHandler;
import io.localmessage.Handler;
import io.localmessage.HandlerConfig;
import io.localmessage.NewMessage;
import java.util.Objects;

/**
 * A handler whose biz type is known only at run time (from configuration, say): declare it as a
 * bean and the starter registers it like a {@link LocalMessageHandler}, with the same conflict
 * check. {@code localmessage.types[<biz-type>].*} properties override the given config setting by
 * setting.
 *
 * <pre>{@code
 * @Bean
 * HandlerRegistration auditRelay(AuditClient client, @Value("${audit.type}") String type) {
 *   return HandlerRegistration.of(type, m -> client.send(m.idemKey(), m.payload()));
 * }
 * }</pre>
 */
public final class HandlerRegistration {
  private final String bizType;
  private final Handler handler;
  private final BatchHandler batchHandler;
  private final AsyncHandler asyncHandler;
  private final HandlerConfig config;

  private HandlerRegistration(
      String bizType,
      Handler handler,
      BatchHandler batchHandler,
      AsyncHandler asyncHandler,
      HandlerConfig config) {
    this.bizType = NewMessage.checkBizType(bizType);
    this.handler = handler;
    this.batchHandler = batchHandler;
    this.asyncHandler = asyncHandler;
    this.config = Objects.requireNonNull(config, "config");
  }

  public static HandlerRegistration of(String bizType, Handler handler) {
    return new HandlerRegistration(
        bizType, Objects.requireNonNull(handler, "handler"), null, null, HandlerConfig.defaults());
  }

  public static HandlerRegistration batch(String bizType, BatchHandler handler) {
    return new HandlerRegistration(
        bizType, null, Objects.requireNonNull(handler, "handler"), null, HandlerConfig.defaults());
  }

  /**
   * An asynchronous handler ({@link io.localmessage.LocalMessages#registerAsync}); also the way to
   * register a handler that is both blocking and asynchronous, as {@code HttpDelivery} is, in its
   * asynchronous mode.
   */
  public static HandlerRegistration async(String bizType, AsyncHandler handler) {
    return new HandlerRegistration(
        bizType, null, null, Objects.requireNonNull(handler, "handler"), HandlerConfig.defaults());
  }

  /** The config before the {@code localmessage.types} properties apply (default: the defaults). */
  public HandlerRegistration withConfig(HandlerConfig config) {
    return new HandlerRegistration(bizType, handler, batchHandler, asyncHandler, config);
  }

  public String bizType() {
    return bizType;
  }

  /** The handler, or null for a batch handler. */
  public Handler handler() {
    return handler;
  }

  /** The batch handler, or null for another kind. */
  public BatchHandler batchHandler() {
    return batchHandler;
  }

  /** The asynchronous handler, or null for another kind. */
  public AsyncHandler asyncHandler() {
    return asyncHandler;
  }

  public HandlerConfig config() {
    return config;
  }
}
