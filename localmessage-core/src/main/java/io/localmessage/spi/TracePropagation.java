package io.localmessage.spi;

import io.localmessage.Message;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Carries a trace across the outbox: the request that saved a message, the handler that ran it
 * (after any number of retries, on any replica), and the hops after it (a Kafka record, an HTTP
 * request). Context travels as string headers, W3C {@code traceparent} and {@code tracestate} (and
 * {@code baggage} when the tracer is configured for it), in the message's {@code headers} column,
 * the record's headers, the request's headers.
 *
 * <p>Two operations, each one hop:
 *
 * <ul>
 *   <li>{@link #inject}: an outgoing hop (a save, a published record, a request sent). It starts a
 *       span as a child of the caller's current context and writes that span's context into the
 *       carrier. The span ends with {@link Span#end}, on any thread.
 *   <li>{@link #restore}: an incoming hop (a handler execution, a consumed record, a request
 *       received). It starts a span as a child of the context found in the carrier (a new trace
 *       when there is none). {@link Span#makeCurrent()} makes it the current context of the calling
 *       thread, so what the handler does (its own saves, its calls) joins the trace.
 * </ul>
 *
 * <p>{@link #observation(Object)} is the implementation on Micrometer Observation (Spring's
 * standard; the tracing bridges to OpenTelemetry and Brave inject and extract the headers). Give
 * the same instance to the engine ({@code LocalMessagesBuilder.tracing}) and to the integrations
 * (the Kafka relay and consumer, HTTP delivery and endpoint). With {@link #NONE}, the default,
 * nothing is written and nothing is restored.
 *
 * <p>Implementations are called on the engine's threads, inside the caller's transaction at save:
 * they must be fast and must not throw. The engine and the integrations call them through {@link
 * #failSafe}, so a throwing implementation is logged and the message goes on without its trace.
 */
public interface TracePropagation {
  /** No tracing: writes nothing, restores nothing, costs nothing. */
  TracePropagation NONE = new TracePropagation() {};

  /**
   * The propagation on a Micrometer {@code io.micrometer.observation.ObservationRegistry}: an
   * observation per hop, with {@code SenderContext} (outgoing) and {@code ReceiverContext}
   * (incoming) over the carrier, so the registry's tracing handlers (micrometer-tracing with its
   * OpenTelemetry or Brave bridge) write and read the headers. Without a tracing handler on the
   * registry the observations still time the hops (a meter handler makes timers of them) but no
   * header is written. Typed as Object so the core needs micrometer-observation on the classpath
   * only when this is used.
   *
   * @throws IllegalArgumentException when Micrometer Observation is not on the classpath or {@code
   *     observationRegistry} is not an {@code ObservationRegistry}
   */
  static TracePropagation observation(Object observationRegistry) {
    Objects.requireNonNull(observationRegistry, "observationRegistry");
    try {
      Class.forName("io.micrometer.observation.ObservationRegistry");
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException(
          "an observation registry was given but Micrometer Observation (micrometer-observation)"
              + " is not on the classpath",
          e);
    }
    return io.localmessage.internal.tracing.ObservationTracing.of(observationRegistry);
  }

  /**
   * {@code tracing} with every exception it throws caught and logged (at most once a minute): the
   * hop then goes on without its span. What the engine and the integrations call.
   */
  static TracePropagation failSafe(TracePropagation tracing) {
    Objects.requireNonNull(tracing, "tracing");
    if (tracing == NONE || tracing instanceof FailSafeTracing) {
      return tracing;
    }
    return new FailSafeTracing(tracing);
  }

  /**
   * Starts an outgoing hop as a child of the calling thread's current context and writes the new
   * span's context into {@code carrier} (which must be mutable). The default writes nothing.
   */
  default Span inject(Hop hop, Map<String, String> carrier) {
    return Span.NOOP;
  }

  /**
   * Starts an incoming hop as a child of the context in {@code carrier} (read only; a new trace
   * when it holds none). The span is not current until {@link Span#makeCurrent()}. The default
   * restores nothing.
   */
  default Span restore(Hop hop, Map<String, String> carrier) {
    return Span.NOOP;
  }

  /** One hop's span. */
  interface Span {
    /** A span that records nothing. */
    Span NOOP =
        new Span() {
          @Override
          public Scope makeCurrent() {
            return Scope.NOOP;
          }

          @Override
          public void end(String outcome, String error) {}
        };

    /**
     * Makes this span the calling thread's current context until the returned scope is closed,
     * which must happen on the same thread.
     */
    Scope makeCurrent();

    /**
     * Ends the span, on any thread, with {@code outcome} (a low-cardinality tag, e.g. {@code
     * success}, {@code retry}, {@code applied}) and, for a failure, the error summary ({@code null}
     * otherwise). Only the first call counts.
     */
    void end(String outcome, String error);
  }

  /** The time a span is current on a thread. */
  interface Scope extends AutoCloseable {
    /** A scope that does nothing. */
    Scope NOOP = () -> {};

    /** Restores the context that was current before; on the thread that opened the scope. */
    @Override
    void close();
  }

  /**
   * What crosses: a name (the observation or span name, e.g. {@code localmessage.handle}), whether
   * it is a message or a request, the name shown for the span, and its tags: low-cardinality ones
   * (also meter tags, e.g. the biz type) and high-cardinality ones (e.g. a message id).
   */
  record Hop(
      String name,
      Kind kind,
      String contextualName,
      Map<String, String> lowCardinality,
      Map<String, String> highCardinality) {

    /** Save of a message: {@code localmessage.save}. */
    public static final String SAVE = "localmessage.save";

    /** One execution of a message's handler: {@code localmessage.handle}. */
    public static final String HANDLE = "localmessage.handle";

    /** A message or a request, which decides the span kind (producer/consumer, client/server). */
    public enum Kind {
      /** A message: producer when sent, consumer when received. */
      MESSAGE,
      /** A request: client when sent, server when received. */
      REQUEST
    }

    /**
     * A hop; tags are copied.
     *
     * @throws NullPointerException when a part is missing
     */
    public Hop {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(contextualName, "contextualName");
      lowCardinality = Map.copyOf(lowCardinality);
      highCardinality = Map.copyOf(highCardinality);
    }

    /** The save of a message of {@code bizType} with {@code idemKey}. */
    public static Hop save(String bizType, String idemKey) {
      return new Hop(
          SAVE,
          Kind.MESSAGE,
          "save " + bizType,
          Map.of("biz_type", bizType),
          Map.of("idem_key", idemKey));
    }

    /**
     * One execution of {@code message}'s handler (the engine's for a handler; a batch handler that
     * hands messages on, as the Kafka relay does, opens one per message itself).
     */
    public static Hop handle(Message message) {
      Map<String, String> high = new LinkedHashMap<>();
      high.put("message_id", Long.toString(message.id()));
      high.put("attempt", Integer.toString(message.attempt()));
      return new Hop(
          HANDLE,
          Kind.MESSAGE,
          "handle " + message.bizType(),
          Map.of("biz_type", message.bizType()),
          high);
    }
  }
}
