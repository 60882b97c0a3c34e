package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.internal.engine.Settings;
import io.localmessage.spi.TracePropagation;
import io.localmessage.testing.TestDatabase;
import io.localmessage.testing.TestTracing;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.test.util.ReflectionTestUtils;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * With an {@code ObservationRegistry} in the application, saves and handlers are traced on it; an
 * application's own {@link TracePropagation} wins; {@code localmessage.tracing.enabled=false} and
 * an application without a registry leave tracing off.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TracingAutoConfigurationTest {
  private TestDatabase db;

  @BeforeAll
  void createDatabase() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }

  @AfterAll
  void dropDatabase() {
    db.close();
  }

  private static TracePropagation tracingOf(LocalMessages lm) {
    return ((Settings) ReflectionTestUtils.getField(lm, "settings")).tracing();
  }

  @Test
  void theApplicationsObservationRegistryTracesSavesAndHandlers() {
    try (TestTracing tracing = new TestTracing("shop")) {
      Contexts.runner(db)
          .withPropertyValues("localmessage.table=traced_message")
          .withBean(ObservationRegistry.class, () -> tracing.registry)
          .withBean(HandlerRegistration.class, () -> HandlerRegistration.of("points.add", m -> {}))
          .run(
              ctx -> {
                assertThat(ctx).hasNotFailed();
                assertThat(ctx).hasSingleBean(TracePropagation.class);
                TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
                TransactionTemplate tx = ctx.getBean(TransactionTemplate.class);
                tracing.inRequest(
                    "POST /orders",
                    () ->
                        tx.execute(
                            st -> messages.save(NewMessage.action("points.add", "o-1").build())));
                await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> tracing.spans("handle points.add").size() == 1);
                SpanData request = tracing.span("POST /orders");
                SpanData save = tracing.span("save points.add");
                SpanData handle = tracing.span("handle points.add");
                assertThat(save.getParentSpanId()).isEqualTo(request.getSpanId());
                assertThat(handle.getParentSpanId()).isEqualTo(save.getSpanId());
                assertThat(handle.getTraceId()).isEqualTo(request.getTraceId());
              });
    }
  }

  @Test
  void anApplicationsOwnPropagationWins() {
    TracePropagation own = new TracePropagation() {};
    Contexts.runner(db)
        .withPropertyValues("localmessage.table=own_traced_message")
        .withBean(ObservationRegistry.class, ObservationRegistry::create)
        .withBean(TracePropagation.class, () -> own)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(tracingOf(ctx.getBean(LocalMessages.class)).toString())
                  .isEqualTo("FailSafe(" + own + ")");
            });
  }

  @Test
  void offByPropertyOrWithoutARegistry() {
    Contexts.runner(db)
        .withPropertyValues(
            "localmessage.table=untraced_message", "localmessage.tracing.enabled=false")
        .withBean(ObservationRegistry.class, ObservationRegistry::create)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(TracePropagation.class);
              assertThat(tracingOf(ctx.getBean(LocalMessages.class)))
                  .isSameAs(TracePropagation.NONE);
            });
    Contexts.runner(db)
        .withPropertyValues("localmessage.table=no_registry_message")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(tracingOf(ctx.getBean(LocalMessages.class)))
                  .isSameAs(TracePropagation.NONE);
            });
  }
}
