package io.localmessage.spring.ops;

import io.localmessage.LocalMessages;
import io.localmessage.Message;
import io.localmessage.NewMessage;
import io.localmessage.PermanentFailure;
import io.localmessage.RetryAfter;
import io.localmessage.spring.LocalMessageHandler;
import io.localmessage.spring.TransactionalMessages;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A workload for the dashboard picture: an application with the starter and actuator's Prometheus
 * endpoint, saving messages of four biz types at a steady rate with retries, "not yet" answers,
 * permanent failures (dead letters) and one pause of a type, for {@code --minutes} minutes.
 * Arguments: {@code --spring.datasource.url=... --server.port=8089 --minutes=8}. Not a test.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(
    excludeName = {
      "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
      "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
      "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration"
    })
public class DashboardWorkload {

  @Component
  static class Handlers {
    @LocalMessageHandler("points.add")
    void points(Message m) throws InterruptedException {
      Thread.sleep(ThreadLocalRandom.current().nextInt(2, 15));
    }

    @LocalMessageHandler("payment.initiate")
    void pay(Message m) throws Exception {
      Thread.sleep(ThreadLocalRandom.current().nextInt(20, 120));
      double r = ThreadLocalRandom.current().nextDouble();
      if (r < 0.15 && m.attempt() < 3) {
        throw new IllegalStateException("channel timeout"); // retried with backoff
      }
      if (r < 0.25 && m.attempt() < 2) {
        throw new RetryAfter(Duration.ofSeconds(5), "payment still processing");
      }
    }

    @LocalMessageHandler("mail.send")
    void mail(Message m) throws Exception {
      Thread.sleep(ThreadLocalRandom.current().nextInt(5, 40));
      if (ThreadLocalRandom.current().nextDouble() < 0.03) {
        throw new PermanentFailure("mailbox does not exist");
      }
    }

    @LocalMessageHandler("ledger.post")
    void ledger(Message m) throws InterruptedException {
      Thread.sleep(ThreadLocalRandom.current().nextInt(5, 25));
    }
  }

  public static void main(String[] args) throws Exception {
    long minutes = 8;
    for (String a : args) {
      if (a.startsWith("--minutes=")) {
        minutes = Long.parseLong(a.substring("--minutes=".length()));
      }
    }
    ConfigurableApplicationContext app =
        new SpringApplicationBuilder(DashboardWorkload.class)
            .properties(
                "management.endpoints.web.exposure.include=health,prometheus",
                "localmessage.schema.initialize=true",
                "localmessage.concurrency=32",
                "localmessage.types[payment.initiate].backoff.fixed=3s",
                "localmessage.types[mail.send].max-attempts=3",
                "localmessage.types[ledger.post].ordered=true")
            .run(args);
    TransactionalMessages messages = app.getBean(TransactionalMessages.class);
    TransactionTemplate tx = app.getBean(TransactionTemplate.class);
    LocalMessages lm = app.getBean(LocalMessages.class);
    AtomicLong n = new AtomicLong();
    long end = System.nanoTime() + Duration.ofMinutes(minutes).toNanos();
    long pauseAt = System.nanoTime() + Duration.ofMinutes(minutes).toNanos() / 2;
    boolean paused = false;
    boolean resumed = false;
    while (System.nanoTime() < end) {
      long i = n.incrementAndGet();
      double wave = 1.5 + Math.sin(i / 1500.0); // a slow swell of the arrival rate, 0.5 to 2.5
      tx.executeWithoutResult(
          s -> {
            messages.save(NewMessage.action("points.add", "o-" + i).payload("{}").build());
            if (i % 2 == 0) {
              messages.save(NewMessage.action("payment.initiate", "p-" + i).payload("{}").build());
            }
            if (i % 3 == 0) {
              messages.save(NewMessage.action("mail.send", "m-" + i).payload("{}").build());
            }
            messages.save(
                NewMessage.action("ledger.post", "l-" + i)
                    .aggregateId("acct-" + (i % 20))
                    .payload("{}")
                    .build());
          });
      if (!paused && System.nanoTime() > pauseAt) {
        lm.admin().pause("mail.send", "dashboard-workload", "mail provider maintenance");
        paused = true;
      }
      if (paused && !resumed && System.nanoTime() > pauseAt + Duration.ofSeconds(90).toNanos()) {
        lm.admin().resume("mail.send", "dashboard-workload", "maintenance over");
        resumed = true;
      }
      Thread.sleep((long) (20 / wave) + 2);
    }
    app.close();
  }
}
