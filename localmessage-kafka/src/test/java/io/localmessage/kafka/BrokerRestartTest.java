package io.localmessage.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.Backoff;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.test.kafka.TestBroker;
import io.localmessage.test.kafka.Topics;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The broker goes down while the relay is publishing: tickets stay PENDING and retry, none is
 * completed without an acknowledgement, and after the restart everything arrives. Its own broker
 * (the shared one must stay up) and PostgreSQL.
 */
class BrokerRestartTest {
  private static final String TYPE = "deposit.paid";

  @Test
  void ticketsWaitForTheBrokerAndNoneIsCompletedWithoutAnAck() throws Exception {
    int n = 1500;
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
        TestBroker broker = TestBroker.start(3);
        EngineFixture fx = new EngineFixture(db.dataSource(8));
        KafkaRelay relay = AbstractRelayTest.relayFor(broker.bootstrapServers())) {
      DataSource ds = fx.dataSource;
      String topic = Topics.unique("restart");
      broker.createTopic(topic, 3);
      LocalMessages lm = fx.build(fx.builder().lease(Duration.ofSeconds(10)).concurrency(20));
      relay.register(
          lm,
          TYPE,
          AbstractRelayTest.relayConfig()
              .batchSize(10)
              .maxAttempts(1000)
              .backoff(Backoff.fixed(Duration.ofMillis(200)))
              // keep completed tickets, to see which ones were completed and when
              .retainSucceeded(Duration.ofHours(1))
              .build());
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        for (int i = 0; i < n; i++) {
          lm.save(
              c,
              NewMessage.event(TYPE, "dep-" + i)
                  .destination(topic)
                  .aggregateId("acct-" + (i % 37))
                  .payload(Integer.toString(i))
                  .build());
        }
        c.commit();
      }
      lm.start();
      await().atMost(60, TimeUnit.SECONDS).until(() -> fx.count("status = 1") >= 300);
      broker.stopBroker();
      // failed sends leave their tickets PENDING with the reason, to be tried again; none goes DEAD
      await()
          .atMost(60, TimeUnit.SECONDS)
          .until(() -> fx.count("status = 0 AND last_error IS NOT NULL") >= 40);
      Set<String> completedWhileDown = succeeded(ds, fx.table);
      assertThat(completedWhileDown.size()).isLessThan(n);
      assertThat(fx.count("status = 2")).isZero();
      assertThat(fx.count("status = 0")).isEqualTo(n - completedWhileDown.size());

      broker.startBroker();
      await().atMost(90, TimeUnit.SECONDS).until(() -> fx.count("status = 1") == n);
      assertThat(fx.count("status = 1 AND attempts >= 2")).isPositive();

      List<String> onTopic =
          AbstractRelayTest.idemKeys(
              Topics.readAll(broker.bootstrapServers(), topic, n, TestBroker.CLIENT_WAIT));
      assertThat(new HashSet<>(onTopic)).hasSize(n);
      // completed while the broker was down means acknowledged before it went down
      assertThat(onTopic).containsAll(completedWhileDown);
    }
  }

  private static Set<String> succeeded(DataSource ds, String table) throws Exception {
    Set<String> out = new HashSet<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT idem_key FROM " + table + " WHERE status = 1");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
