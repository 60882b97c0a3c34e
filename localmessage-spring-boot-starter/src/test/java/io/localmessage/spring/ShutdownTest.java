package io.localmessage.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.Message;
import io.localmessage.NewMessage;
import io.localmessage.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Closing the context stops the workers gracefully. A handler that leaves when the shutdown
 * interrupts it gives its attempt back and its ticket is due at once: a second application on the
 * same database delivers it right away instead of after the lease. A handler that ignores the
 * interrupt keeps its lease (no renewal after close): nobody runs the ticket until the lease ends.
 */
class ShutdownTest {
  // fresh for each run: the handlers reach them statically
  static volatile CountDownLatch release;
  static volatile CountDownLatch startedInA;
  static final List<String> DELIVERED_IN_B = new CopyOnWriteArrayList<>();

  @Configuration(proxyBeanMethods = false)
  static class InterruptibleHandler {
    @LocalMessageHandler("sd.slow")
    void handle(Message m) throws InterruptedException {
      startedInA.countDown();
      release.await(30, TimeUnit.SECONDS); // the shutdown's interrupt ends the wait
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class StuckHandler {
    @LocalMessageHandler("sd.slow")
    void handle(Message m) {
      startedInA.countDown();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      // ignores the shutdown's interrupt, as a handler stuck in a remote call would
      while (release.getCount() > 0 && System.nanoTime() < deadline) {
        try {
          release.await(100, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          // keep waiting
        }
      }
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class WorkingHandler {
    @LocalMessageHandler("sd.slow")
    void handle(Message m) {
      DELIVERED_IN_B.add(m.idemKey() + " attempt " + m.attempt());
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Kind.class,
      names = {"POSTGRESQL", "MARIADB"})
  void anInterruptedHandlerGivesItsTicketBackAtOnce(TestDatabase.Kind kind) {
    String key = "interrupted-" + kind;
    run(
        kind,
        InterruptibleHandler.class,
        key,
        new String[] {"localmessage.lease=60s"},
        closedMillis -> {
          long started = System.nanoTime();
          await()
              .atMost(Duration.ofSeconds(15))
              .until(() -> DELIVERED_IN_B.contains(key + " attempt 1"));
          System.out.printf(
              "[%s] context close with an interrupted handler took %d ms; the next application"
                  + " delivered the ticket %d ms after its start (lease 60 s)%n",
              kind, closedMillis, (System.nanoTime() - started) / 1_000_000);
        });
  }

  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Kind.class,
      names = {"POSTGRESQL", "MARIADB"})
  void aHandlerThatIgnoresTheInterruptKeepsItsLeaseUntilItEnds(TestDatabase.Kind kind) {
    String key = "stuck-" + kind;
    run(
        kind,
        StuckHandler.class,
        key,
        new String[] {"localmessage.lease=6s", "localmessage.write-back-margin=1s"},
        closedMillis -> {
          long started = System.nanoTime();
          // the lease was renewed until the close began: more than 3 s of it are left here
          await()
              .during(Duration.ofSeconds(1))
              .atMost(Duration.ofSeconds(2))
              .until(() -> DELIVERED_IN_B.stream().noneMatch(d -> d.startsWith(key)));
          await()
              .atMost(Duration.ofSeconds(15))
              .until(() -> DELIVERED_IN_B.contains(key + " attempt 1"));
          System.out.printf(
              "[%s] context close with a stuck handler took %d ms; the next application"
                  + " delivered the ticket %d ms after its start, once the lease (6 s) ended%n",
              kind, closedMillis, (System.nanoTime() - started) / 1_000_000);
        });
  }

  interface Takeover {
    void check(long closedMillis) throws Exception;
  }

  /** Application A claims the ticket and is closed mid-handler; then application B starts. */
  private static void run(
      TestDatabase.Kind kind, Class<?> handlerInA, String key, String[] props, Takeover takeover) {
    release = new CountDownLatch(1);
    startedInA = new CountDownLatch(1);
    try (TestDatabase db = TestDatabase.create(kind)) {
      ApplicationContextRunner base =
          Contexts.runner(db)
              .withPropertyValues(props)
              .withPropertyValues(
                  "localmessage.types[sd.slow].timeout=30s",
                  "localmessage.shutdown-timeout=500ms",
                  "localmessage.poll-interval=200ms");
      base.withUserConfiguration(handlerInA)
          .withPropertyValues("localmessage.replica-id=replica-a")
          .run(
              a -> {
                TransactionalMessages messages = a.getBean(TransactionalMessages.class);
                a.getBean(TransactionTemplate.class)
                    .executeWithoutResult(
                        s -> messages.save(NewMessage.action("sd.slow", key).build()));
                assertThat(startedInA.await(10, TimeUnit.SECONDS)).isTrue();

                long closing = System.nanoTime();
                a.close();
                long closedMillis = (System.nanoTime() - closing) / 1_000_000;

                base.withUserConfiguration(WorkingHandler.class)
                    .withPropertyValues("localmessage.replica-id=replica-b")
                    .run(b -> takeover.check(closedMillis));
              });
    } finally {
      release.countDown();
    }
  }
}
