package io.localmessage.testing;

import io.micrometer.observation.Observation;
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
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A real tracer for tests: Micrometer Observation bridged to the OpenTelemetry SDK (W3C trace
 * context), every span exported to an in-memory exporter. One instance is one service: its spans
 * carry {@code service.name}; several services can share one exporter.
 */
public final class TestTracing implements AutoCloseable {
  public final InMemorySpanExporter exporter;
  public final ObservationRegistry registry = ObservationRegistry.create();
  private final SdkTracerProvider provider;

  public TestTracing(String service) {
    this(service, InMemorySpanExporter.create());
  }

  public TestTracing(String service, InMemorySpanExporter exporter) {
    this.exporter = exporter;
    this.provider =
        SdkTracerProvider.builder()
            .setResource(
                Resource.getDefault()
                    .merge(
                        Resource.create(
                            Attributes.of(AttributeKey.stringKey("service.name"), service))))
            .addSpanProcessor(SimpleSpanProcessor.create(exporter))
            .setSampler(Sampler.alwaysOn())
            .build();
    io.opentelemetry.api.trace.Tracer otel = provider.get("localmessage-test");
    ContextPropagators propagators =
        ContextPropagators.create(W3CTraceContextPropagator.getInstance());
    OtelCurrentTraceContext current = new OtelCurrentTraceContext();
    OtelTracer tracer =
        new OtelTracer(
            otel, current, event -> {}, new OtelBaggageManager(current, List.of(), List.of()));
    OtelPropagator propagator = new OtelPropagator(propagators, otel);
    registry
        .observationConfig()
        .observationHandler(
            new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
  }

  /** Runs {@code work} inside a server span named {@code name}, as a request handler would. */
  public <T> T inRequest(String name, Supplier<T> work) {
    return Observation.createNotStarted(name, registry).observe(work);
  }

  /** Every span ended so far. */
  public List<SpanData> spans() {
    return exporter.getFinishedSpanItems();
  }

  /** The ended spans named {@code name}, in the order they ended. */
  public List<SpanData> spans(String name) {
    return spans().stream().filter(s -> s.getName().equals(name)).toList();
  }

  /** The one ended span named {@code name}. */
  public SpanData span(String name) {
    List<SpanData> found = spans(name);
    if (found.size() != 1) {
      throw new AssertionError(
          "expected one span named " + name + ", found " + found.size() + ": " + spans());
    }
    return found.get(0);
  }

  /** The ended span with {@code spanId}. */
  public Optional<SpanData> byId(String spanId) {
    return spans().stream().filter(s -> s.getSpanId().equals(spanId)).findFirst();
  }

  @Override
  public void close() {
    provider.close();
  }
}
