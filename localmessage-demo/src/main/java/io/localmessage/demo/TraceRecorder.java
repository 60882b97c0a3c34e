package io.localmessage.demo;

import io.localmessage.spi.TracePropagation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The demo's tracer with {@code --trace}: each service of the flow (deposit service, ledger
 * service) gets its own Micrometer {@code ObservationRegistry}, bridged to an OpenTelemetry SDK
 * tracer whose spans carry the service's name, and every span goes to one in-memory exporter, from
 * which one deposit's trace is printed as a tree. Without {@code --trace}, every service gets
 * {@link TracePropagation#NONE}.
 */
final class TraceRecorder implements AutoCloseable {
  static final String REQUEST = "demo.request";
  private static final AttributeKey<String> SERVICE = AttributeKey.stringKey("service.name");

  private final boolean on;
  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final List<SdkTracerProvider> providers = new ArrayList<>();
  private final Map<String, TracePropagation> services = new HashMap<>();

  TraceRecorder(boolean on) {
    this.on = on;
  }

  boolean on() {
    return on;
  }

  /** The propagation of {@code service}: its own tracer, the shared exporter. */
  synchronized TracePropagation service(String service) {
    if (!on) {
      return TracePropagation.NONE;
    }
    return services.computeIfAbsent(service, this::create);
  }

  private TracePropagation create(String service) {
    SdkTracerProvider provider =
        SdkTracerProvider.builder()
            .setResource(
                Resource.getDefault().merge(Resource.create(Attributes.of(SERVICE, service))))
            .addSpanProcessor(SimpleSpanProcessor.create(exporter))
            .setSampler(Sampler.alwaysOn())
            .build();
    providers.add(provider);
    io.opentelemetry.api.trace.Tracer otel = provider.get("localmessage-demo");
    OtelCurrentTraceContext current = new OtelCurrentTraceContext();
    OtelTracer tracer =
        new OtelTracer(
            otel, current, event -> {}, new OtelBaggageManager(current, List.of(), List.of()));
    OtelPropagator propagator =
        new OtelPropagator(
            ContextPropagators.create(W3CTraceContextPropagator.getInstance()), otel);
    ObservationRegistry registry = ObservationRegistry.create();
    registry
        .observationConfig()
        .observationHandler(
            new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
    return TracePropagation.observation(registry);
  }

  /** A request that creates a deposit: the root of its trace. */
  TracePropagation.Span request(String depositId) {
    return service("deposit-service")
        .restore(
            new TracePropagation.Hop(
                REQUEST,
                TracePropagation.Hop.Kind.REQUEST,
                "POST /deposits",
                Map.of(),
                Map.of("deposit_id", depositId)),
            Map.of());
  }

  /**
   * The trace of one deposit that went the whole way, preferring one whose payment needed the most
   * attempts, as an indented tree (service, span, duration); null when nothing was traced.
   */
  String tree() {
    List<SpanData> all = exporter.getFinishedSpanItems();
    Map<String, List<SpanData>> byTrace = new HashMap<>();
    for (SpanData s : all) {
      byTrace.computeIfAbsent(s.getTraceId(), k -> new ArrayList<>()).add(s);
    }
    List<SpanData> best = null;
    long bestScore = -1;
    for (List<SpanData> trace : byTrace.values()) {
      boolean rooted = trace.stream().anyMatch(s -> s.getName().equals("POST /deposits"));
      boolean confirmed = trace.stream().anyMatch(s -> s.getName().startsWith("receive "));
      if (!rooted || !confirmed) {
        continue;
      }
      long attempts =
          trace.stream().filter(s -> s.getName().equals("handle payment.initiate")).count();
      long score = attempts * 1000 + trace.size();
      if (score > bestScore) {
        bestScore = score;
        best = trace;
      }
    }
    return best == null ? null : render(best);
  }

  private static String render(List<SpanData> trace) {
    Map<String, List<SpanData>> children = new HashMap<>();
    List<SpanData> roots = new ArrayList<>();
    Map<String, SpanData> byId = new HashMap<>();
    trace.forEach(s -> byId.put(s.getSpanId(), s));
    for (SpanData s : trace) {
      if (byId.containsKey(s.getParentSpanId())) {
        children.computeIfAbsent(s.getParentSpanId(), k -> new ArrayList<>()).add(s);
      } else {
        roots.add(s);
      }
    }
    Comparator<SpanData> byStart = Comparator.comparingLong(SpanData::getStartEpochNanos);
    roots.sort(byStart);
    children.values().forEach(l -> l.sort(byStart));
    SpanData first = roots.get(0);
    StringBuilder out = new StringBuilder();
    String deposit = first.getAttributes().get(AttributeKey.stringKey("deposit_id"));
    out.append(
        String.format(
            "trace %s of deposit %s (%d spans)%n", first.getTraceId(), deposit, trace.size()));
    out.append(String.format("%-16s %-72s %10s %9s%n", "service", "span", "start", "duration"));
    for (SpanData root : roots) {
      print(out, root, 0, children, first.getStartEpochNanos());
    }
    return out.toString();
  }

  private static void print(
      StringBuilder out,
      SpanData s,
      int depth,
      Map<String, List<SpanData>> children,
      long traceStart) {
    String name = "  ".repeat(depth) + s.getName() + details(s);
    out.append(
        String.format(
            "%-16s %-72s %+8d ms %6d ms%n",
            s.getResource().getAttribute(SERVICE),
            name,
            TimeUnit.NANOSECONDS.toMillis(s.getStartEpochNanos() - traceStart),
            TimeUnit.NANOSECONDS.toMillis(s.getEndEpochNanos() - s.getStartEpochNanos())));
    for (SpanData c : children.getOrDefault(s.getSpanId(), List.of())) {
      print(out, c, depth + 1, children, traceStart);
    }
  }

  private static String details(SpanData s) {
    String attempt = s.getAttributes().get(AttributeKey.stringKey("attempt"));
    String outcome = s.getAttributes().get(AttributeKey.stringKey("outcome"));
    List<String> parts = new ArrayList<>();
    if (attempt != null) {
      parts.add("attempt " + attempt);
    }
    if (outcome != null) {
      parts.add(outcome);
    }
    return parts.isEmpty() ? "" : " [" + String.join(", ", parts) + "]";
  }

  @Override
  public void close() {
    providers.forEach(SdkTracerProvider::close);
  }
}
