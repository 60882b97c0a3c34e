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
 * Closing the context stops the workers gracefully (DESIGN invariant 8): a handler still running
 * after the shutdown timeout loses its ticket's lease at once, so a second application on the same
 * database delivers it right away instead of after the one-minute lease.
 */
class ShutdownTest {
  // fresh for each database: the handlers reach them statically
  static volatile CountDownLatch release;
  static volatile CountDownLatch startedInA;
  static final List<String> DELIVERED_IN_B = new CopyOnWriteArrayList<>();

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
  void closingTheContextReleasesTheLeasesOfUnfinishedHandlers(TestDatabase.Kind kind) {
    release = new CountDownLatch(1);
    startedInA = new CountDownLatch(1);
    try (TestDatabase db = TestDatabase.create(kind)) {
      String key = "job-" + kind;
      ApplicationContextRunner base =
          Contexts.runner(db)
              .withPropertyValues(
                  "localmessage.lease=60s",
                  "localmessage.types[sd.slow].timeout=30s",
                  "localmessage.shutdown-timeout=500ms");
      base.withUserConfiguration(StuckHandler.class)
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

                long started = System.nanoTime();
                base.withUserConfiguration(WorkingHandler.class)
                    .withPropertyValues("localmessage.replica-id=replica-b")
                    .run(
                        b ->
                            await()
                                .atMost(Duration.ofSeconds(15))
                                .until(() -> DELIVERED_IN_B.contains(key + " attempt 2")));
                long takeoverMillis = (System.nanoTime() - started) / 1_000_000;
                System.out.printf(
                    "[%s] context close with a stuck handler took %d ms; the next application"
                        + " delivered the ticket %d ms after its start (lease 60 s)%n",
                    db, closedMillis, takeoverMillis);
              });
    } finally {
      release.countDown();
    }
  }
}
