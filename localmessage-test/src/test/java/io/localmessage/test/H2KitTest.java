package io.localmessage.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.RetryAfter;
import io.localmessage.SaveResult;
import io.localmessage.admin.MessageView;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class H2KitTest {
  @RegisterExtension static LocalMessagesExtension db = LocalMessagesExtension.h2();

  private static HandlerConfig config() {
    return HandlerConfig.builder().handlerTimeout(Duration.ofSeconds(2)).build();
  }

  @Test
  void savedMessagesShowsWhatTheWorkSavedAndDrainRunsIt() throws Exception {
    LocalMessages lm = db.engine();
    AtomicInteger ran = new AtomicInteger();
    lm.register("t.a", m -> ran.incrementAndGet(), config());
    SavedMessages saved =
        SavedMessages.during(
            lm,
            db.dataSource(),
            db.table(),
            () ->
                lm.inTransaction(
                    c -> {
                      lm.save(c, NewMessage.action("t.a", "k1").aggregateId("order-1").build());
                      return lm.save(c, NewMessage.event("t.b", "k2").build());
                    }));
    assertThat(saved.size()).isEqualTo(2);
    MessageView a = saved.single("t.a");
    assertThat(a.idemKey()).isEqualTo("k1");
    assertThat(a.aggregateId()).isEqualTo("order-1");
    assertThat(a.status()).isEqualTo(MessageStatus.PENDING);
    assertThatThrownBy(() -> saved.single("t.c"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("found 0")
        .hasMessageContaining("t.a/k1");
    assertThat(Drain.all(lm)).as("only the registered type runs").isEqualTo(1);
    assertThat(ran.get()).isEqualTo(1);
    assertThat(lm.admin().get(a.id())).as("a success without retention is deleted").isEmpty();
    SavedMessages none = SavedMessages.during(lm, db.dataSource(), db.table(), () -> {});
    none.assertNone();
  }

  @Test
  void aCrashedEngineKeepsItsLeaseUntilItEndsThenAnotherReplicaRunsTheMessage() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    LocalMessages a = db.build(db.builder().replicaId("a"));
    a.register(
        "t.a",
        m -> {
          inside.countDown();
          release.await();
        },
        config());
    LocalMessages b = db.build(db.builder().replicaId("b"));
    List<Integer> attempts = Collections.synchronizedList(new ArrayList<>());
    b.register("t.a", m -> attempts.add(m.attempt()), config());
    SaveResult s;
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      s = a.save(c, NewMessage.action("t.a", "k").build());
      c.commit();
    }
    a.start();
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    try {
      Crash.halt(a);
      assertThat(Drain.all(b)).as("the crashed replica's lease is still live").isZero();
      try (Connection c = db.dataSource().getConnection();
          PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE " + db.table() + " SET next_retry_at = created_at WHERE id = ?")) {
        ps.setLong(1, s.id());
        ps.executeUpdate();
      }
      assertThat(Drain.all(b)).isEqualTo(1);
      assertThat(attempts).as("the takeover is the second attempt").containsExactly(2);
    } finally {
      release.countDown();
    }
    assertThatThrownBy(() -> Crash.halt(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void drainStopsAtItsBoundWhenAHandlerKeepsTheMessageDue() {
    LocalMessages lm = db.engine();
    lm.register(
        "t.a",
        m -> {
          throw new RetryAfter(Duration.ZERO, "not yet");
        },
        config());
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      lm.save(c, NewMessage.action("t.a", "k").build());
      c.commit();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    assertThatThrownBy(() -> Drain.all(lm, 3))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("after 3 claim rounds (3 deliveries)");
  }
}
