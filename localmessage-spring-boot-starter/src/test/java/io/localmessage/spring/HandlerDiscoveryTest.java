package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.AsyncHandler;
import io.localmessage.BatchHandler;
import io.localmessage.Handler;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.Message;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.Outcome;
import io.localmessage.SaveResult;
import io.localmessage.admin.MessageView;
import io.localmessage.spring.internal.HandlerBeanRegistrar;
import io.localmessage.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Every way to declare a handler bean, payload conversion, and the startup errors. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HandlerDiscoveryTest {
  private TestDatabase db;

  /** What the handlers saw, as "biz type: value". */
  static final Queue<String> SEEN = new ConcurrentLinkedQueue<>();

  @BeforeAll
  void createDatabase() {
    db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
  }

  @AfterAll
  void dropDatabase() {
    db.close();
  }

  private ApplicationContextRunner runner() {
    return Contexts.runner(db).withPropertyValues("localmessage.poll-interval=200ms");
  }

  record Points(String user, int amount) {}

  @Configuration(proxyBeanMethods = false)
  static class MethodHandlers {
    @LocalMessageHandler("m.message")
    void message(Message m) {
      SEEN.add("m.message: " + m.idemKey());
    }

    @LocalMessageHandler("m.bytes")
    void bytes(byte[] payload) {
      SEEN.add("m.bytes: " + payload.length);
    }

    @LocalMessageHandler("m.text")
    void text(String payload) {
      SEEN.add("m.text: " + payload);
    }

    @LocalMessageHandler("m.json")
    void json(Points points) {
      SEEN.add("m.json: " + points);
    }

    @LocalMessageHandler("m.list")
    void list(Message m, List<Points> points) {
      SEEN.add("m.list: " + m.idemKey() + " " + points);
    }

    @Bean
    @LocalMessageHandler("m.factory")
    Handler factoryHandler() {
      return m -> SEEN.add("m.factory: " + m.idemKey());
    }

    @Bean
    ClassHandler classHandler() {
      return new ClassHandler();
    }

    @Bean
    Batch batchHandler() {
      return new Batch();
    }

    @Bean
    HandlerRegistration dynamicHandler() {
      String type = "m." + "dynamic"; // e.g. from configuration
      return HandlerRegistration.of(type, m -> SEEN.add(type + ": " + m.idemKey()))
          .withConfig(HandlerConfig.builder().maxAttempts(4).build());
    }

    @Bean
    TransactionalHandler transactionalHandler() {
      return new TransactionalHandler();
    }

    @Bean
    AsyncClassHandler asyncClassHandler() {
      return new AsyncClassHandler();
    }

    @Bean
    HandlerRegistration asyncRegistration() {
      return HandlerRegistration.async(
          "m.async-dynamic",
          m -> CompletableFuture.runAsync(() -> SEEN.add("m.async-dynamic: " + m.idemKey())));
    }
  }

  @LocalMessageHandler("m.async")
  static class AsyncClassHandler implements AsyncHandler {
    @Override
    public CompletionStage<Void> handleAsync(Message m) {
      return CompletableFuture.runAsync(() -> SEEN.add("m.async: " + m.idemKey()));
    }
  }

  @LocalMessageHandler("m.class")
  static class ClassHandler implements Handler {
    @Override
    public void handle(Message m) {
      SEEN.add("m.class: " + m.idemKey());
    }
  }

  @LocalMessageHandler("m.batch")
  static class Batch implements BatchHandler {
    @Override
    public List<Outcome> handle(List<Message> messages) {
      messages.forEach(m -> SEEN.add("m.batch: " + m.idemKey()));
      return messages.stream().map(m -> Outcome.success()).toList();
    }
  }

  /** Proxied by @Transactional: the handler runs through the proxy, in a transaction. */
  static class TransactionalHandler {
    @Transactional
    @LocalMessageHandler("m.tx")
    public void handle(Message m) {
      SEEN.add(
          "m.tx: "
              + m.idemKey()
              + " in transaction "
              + TransactionSynchronizationManager.isActualTransactionActive());
    }
  }

  @Test
  void everyKindOfHandlerBeanIsRegisteredAndCalled() {
    SEEN.clear();
    runner()
        .withUserConfiguration(MethodHandlers.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx.getBean(HandlerBeanRegistrar.class).registered())
                  .containsOnlyKeys(
                      "m.message",
                      "m.bytes",
                      "m.text",
                      "m.json",
                      "m.list",
                      "m.factory",
                      "m.class",
                      "m.batch",
                      "m.tx",
                      "m.dynamic",
                      "m.async",
                      "m.async-dynamic")
                  .containsEntry(
                      "m.json",
                      "bean 'handlerDiscoveryTest.MethodHandlers' method"
                          + " MethodHandlers.json(Points)")
                  .containsEntry("m.dynamic", "bean 'dynamicHandler' (HandlerRegistration)")
                  .hasEntrySatisfying(
                      "m.factory", d -> assertThat(d).startsWith("bean 'factoryHandler' ("));
              // the registration's own config applies (no properties for this type)
              LocalMessages lm = ctx.getBean(LocalMessages.class);
              long later =
                  lm.inTransaction(
                          c ->
                              lm.save(
                                  c,
                                  NewMessage.action("m.dynamic", "later")
                                      .delay(Duration.ofHours(1))
                                      .build()))
                      .id();
              assertThat(lm.admin().get(later).orElseThrow().maxAttempts()).isEqualTo(4);
              TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
              ctx.getBean(TransactionTemplate.class)
                  .executeWithoutResult(
                      s ->
                          messages.saveAll(
                              List.of(
                                  action("m.message", "k1", ""),
                                  action("m.bytes", "k2", "abc"),
                                  action("m.text", "k3", "héllo"),
                                  action("m.json", "k4", "{\"user\":\"ann\",\"amount\":5}"),
                                  action("m.list", "k5", "[{\"user\":\"bob\",\"amount\":1}]"),
                                  action("m.factory", "k6", ""),
                                  action("m.class", "k7", ""),
                                  action("m.batch", "k8", ""),
                                  action("m.tx", "k9", ""),
                                  action("m.dynamic", "k10", ""),
                                  action("m.async", "k11", ""),
                                  action("m.async-dynamic", "k12", ""))));
              await().atMost(Duration.ofSeconds(10)).until(() -> SEEN.size() == 12);
              assertThat(SEEN)
                  .containsExactlyInAnyOrder(
                      "m.message: k1",
                      "m.bytes: 3",
                      "m.text: héllo",
                      "m.json: Points[user=ann, amount=5]",
                      "m.list: k5 [Points[user=bob, amount=1]]",
                      "m.factory: k6",
                      "m.class: k7",
                      "m.batch: k8",
                      "m.tx: k9 in transaction true",
                      "m.dynamic: k10",
                      "m.async: k11",
                      "m.async-dynamic: k12");
            });
  }

  @Test
  void aPayloadThatIsNotValidJsonGoesDeadAtOnce() {
    SEEN.clear();
    runner()
        .withUserConfiguration(MethodHandlers.class)
        .run(
            ctx -> {
              TransactionalMessages messages = ctx.getBean(TransactionalMessages.class);
              SaveResult r =
                  ctx.getBean(TransactionTemplate.class)
                      .execute(s -> messages.save(action("m.json", "bad", "{not json")));
              LocalMessages lm = ctx.getBean(LocalMessages.class);
              await()
                  .atMost(Duration.ofSeconds(10))
                  .until(
                      () ->
                          lm.admin()
                              .get(r.id())
                              .map(t -> t.status() == MessageStatus.DEAD)
                              .orElse(false));
              MessageView t = lm.admin().get(r.id()).orElseThrow();
              assertThat(t.attempts()).isEqualTo(1);
              assertThat(t.lastError())
                  .contains("is not a valid " + Points.class.getName())
                  .contains("MethodHandlers.json(Points)");
              assertThat(SEEN).isEmpty();
            });
  }

  @Component("firstPoints")
  static class FirstPoints {
    @LocalMessageHandler("points.add")
    void add(Message m) {}
  }

  @Component("secondPoints")
  static class SecondPoints {
    @LocalMessageHandler("points.add")
    void add(byte[] payload) {}
  }

  @Test
  void twoHandlersForOneTypeFailStartupNamingBothBeans() {
    runner()
        .withBean("firstPoints", FirstPoints.class)
        .withBean("secondPoints", SecondPoints.class)
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .hasMessage(
                        "biz type 'points.add' has two handlers: bean 'firstPoints' method"
                            + " FirstPoints.add(Message) and bean 'secondPoints' method"
                            + " SecondPoints.add(byte[]). A biz type has exactly one handler per"
                            + " application."));
  }

  static class TwoPayloads {
    @LocalMessageHandler("bad.signature")
    void handle(String a, byte[] b) {}
  }

  @LocalMessageHandler("not.a.handler")
  static class NotAHandler {}

  @Test
  void badDeclarationsFailStartupWithTheReason() {
    runner()
        .withBean("twoPayloads", TwoPayloads.class)
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .hasMessageContaining(
                        "bean 'twoPayloads' method TwoPayloads.handle(String, byte[]) has 2"
                            + " payload parameters; at most one is allowed"));
    runner()
        .withBean("notAHandler", NotAHandler.class)
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .hasMessageContaining("bean 'notAHandler'")
                    .hasMessageContaining(
                        "implements none of io.localmessage.Handler,"
                            + " io.localmessage.BatchHandler and io.localmessage.AsyncHandler"));
    runner()
        .withBean("both", BlockingAndAsync.class)
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .hasMessageContaining("bean 'both'")
                    .hasMessageContaining(
                        "implements more than one of Handler, BatchHandler and AsyncHandler"));
  }

  @Test
  void virtualThreadsAreASettingThatNamesTheJvmWhereItHasNone() {
    SEEN.clear();
    runner()
        .withPropertyValues("localmessage.virtual-threads=true")
        .withUserConfiguration(MethodHandlers.class)
        .run(
            ctx -> {
              if (Runtime.version().feature() < 21) {
                assertThat(ctx)
                    .getFailure()
                    .hasMessageContaining("needs Java 21 or later")
                    .hasMessageContaining(Runtime.version().toString());
                return;
              }
              assertThat(ctx).hasNotFailed();
              ctx.getBean(TransactionTemplate.class)
                  .executeWithoutResult(
                      s ->
                          ctx.getBean(TransactionalMessages.class)
                              .save(action("m.message", "on-a-virtual-thread", "")));
              await().atMost(Duration.ofSeconds(10)).until(() -> SEEN.size() == 1);
            });
  }

  /** Both blocking and asynchronous, as HttpDelivery is: the starter cannot guess which. */
  @LocalMessageHandler("m.both")
  static class BlockingAndAsync implements Handler, AsyncHandler {
    @Override
    public void handle(Message m) {}

    @Override
    public CompletionStage<Void> handleAsync(Message m) {
      return CompletableFuture.completedFuture(null);
    }
  }

  private static NewMessage action(String type, String key, String payload) {
    return NewMessage.action(type, key).payload(payload.getBytes(StandardCharsets.UTF_8)).build();
  }
}
