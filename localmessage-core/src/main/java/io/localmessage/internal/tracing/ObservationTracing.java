package io.localmessage.internal.tracing;

import io.localmessage.spi.TracePropagation;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.Propagator;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link TracePropagation} on Micrometer Observation: an outgoing hop is an observation with a
 * {@link SenderContext}, an incoming one an observation with a {@link ReceiverContext}, both over
 * the header map, so the registry's tracing handlers write and read {@code traceparent} (and what
 * else their propagator is configured for). Not API: {@code TracePropagation.observation(registry)}
 * builds it.
 */
public final class ObservationTracing implements TracePropagation {
  private static final Propagator.Setter<Map<String, String>> SETTER =
      (carrier, key, value) -> {
        if (carrier != null) {
          carrier.put(key, value);
        }
      };

  /** Header names are matched exactly first, then ignoring case (HTTP header maps). */
  private static final Propagator.Getter<Map<String, String>> GETTER =
      (carrier, key) -> {
        if (carrier == null) {
          return null;
        }
        String v = carrier.get(key);
        if (v != null) {
          return v;
        }
        for (Map.Entry<String, String> e : carrier.entrySet()) {
          if (e.getKey() != null && e.getKey().toLowerCase(Locale.ROOT).equals(key)) {
            return e.getValue();
          }
        }
        return null;
      };

  private final ObservationRegistry registry;

  private ObservationTracing(ObservationRegistry registry) {
    this.registry = registry;
  }

  /** The propagation on {@code registry}, an {@code ObservationRegistry}. */
  public static TracePropagation of(Object registry) {
    if (!(registry instanceof ObservationRegistry r)) {
      throw new IllegalArgumentException(
          "observationRegistry must be an io.micrometer.observation.ObservationRegistry, was "
              + registry.getClass().getName());
    }
    return new ObservationTracing(r);
  }

  @Override
  public Span inject(Hop hop, Map<String, String> carrier) {
    SenderContext<Map<String, String>> context =
        new SenderContext<>(SETTER, hop.kind() == Hop.Kind.REQUEST ? Kind.CLIENT : Kind.PRODUCER);
    context.setCarrier(carrier);
    return start(hop, context);
  }

  @Override
  public Span restore(Hop hop, Map<String, String> carrier) {
    ReceiverContext<Map<String, String>> context =
        new ReceiverContext<>(GETTER, hop.kind() == Hop.Kind.REQUEST ? Kind.SERVER : Kind.CONSUMER);
    context.setCarrier(carrier);
    return start(hop, context);
  }

  private Span start(Hop hop, Observation.Context context) {
    Observation o = Observation.createNotStarted(hop.name(), () -> context, registry);
    if (o.isNoop()) {
      return Span.NOOP;
    }
    o.contextualName(hop.contextualName());
    hop.lowCardinality().forEach(o::lowCardinalityKeyValue);
    hop.highCardinality().forEach(o::highCardinalityKeyValue);
    return new Observed(o.start());
  }

  @Override
  public String toString() {
    return "ObservationTracing(" + registry + ")";
  }

  /** A started observation. */
  private static final class Observed implements Span {
    private final Observation observation;
    private final AtomicBoolean ended = new AtomicBoolean();

    Observed(Observation observation) {
      this.observation = observation;
    }

    @Override
    public Scope makeCurrent() {
      Observation.Scope scope = observation.openScope();
      return scope::close;
    }

    @Override
    public void end(String outcome, String error) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      if (outcome != null) {
        observation.lowCardinalityKeyValue(KeyValue.of("outcome", outcome));
      }
      if (error != null) {
        observation.error(new HopFailed(error));
      }
      observation.stop();
    }
  }

  /** The error of a hop whose failure is known only as text (an outcome's last_error). */
  static final class HopFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    HopFailed(String message) {
      super(message, null, false, false);
    }
  }
}
