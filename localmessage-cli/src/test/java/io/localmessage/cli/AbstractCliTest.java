package io.localmessage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.PermanentFailure;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Each subcommand against a real database, run in-process through {@link Main#run}. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractCliTest {
  private TestDatabase db;
  private EngineFixture fx;
  private LocalMessages lm;
  private List<Long> dead;

  protected abstract TestDatabase.Kind kind();

  @BeforeAll
  void createDb() {
    db = TestDatabase.create(kind());
  }

  @AfterAll
  void dropDb() {
    db.close();
  }

  @BeforeEach
  void seed() {
    fx = new EngineFixture(db.dataSource(4));
    lm = fx.build(fx.builder());
    lm.register(
        "pay.init",
        m -> {
          throw new PermanentFailure("card declined");
        },
        EngineFixture.config().build());
    for (int i = 0; i < 3; i++) {
      fx.save(
          lm,
          NewMessage.action("pay.init", "pay-" + i)
              .aggregateId("order-" + i)
              .payload("{\"amount\":" + i + "}")
              .build());
    }
    fx.save(lm, NewMessage.event("deposit.paid", "evt-1").aggregateId("order-1").build());
    assertThat(lm.runOnce()).isEqualTo(3);
    dead = new ArrayList<>();
    lm.admin().listDead("pay.init", 0, 10).forEach(t -> dead.add(t.id()));
    assertThat(dead).hasSize(3);
  }

  @AfterEach
  void stop() {
    fx.close();
  }

  private record Result(int code, String out, String err) {}

  private Result cli(String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--jdbc-url",
                db.jdbcUrl(),
                "--user",
                db.user(),
                "--table",
                fx.table,
                "--inbox-table",
                fx.table + "_inbox",
                "--operator",
                "bob"));
    all.addAll(List.of(args));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        Main.run(
            all.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));
    return new Result(code, out.toString(), err.toString());
  }

  @Test
  void statsShowsTheBacklogPerType() {
    Result r = cli("stats");
    assertThat(r.code()).isZero();
    assertThat(r.out())
        .contains("BIZ_TYPE")
        .containsPattern("pay\\.init\\s+0\\s+0\\s+0\\s+3")
        .containsPattern("deposit\\.paid\\s+1\\s+1");
    Result json = cli("--json", "stats");
    assertThat(json.out()).contains("\"bizType\":\"pay.init\"").contains("\"dead\":3");
  }

  @Test
  void deadListPagesAndFiltersByType() {
    Result r = cli("dead", "list", "--type", "pay.init", "--limit", "2");
    assertThat(r.code()).isZero();
    assertThat(r.out().lines().count()).isEqualTo(3);
    assertThat(r.out()).contains("card declined");
    Result next = cli("dead", "list", "--after", Long.toString(dead.get(1)));
    assertThat(next.out().lines().count()).isEqualTo(2);
    assertThat(cli("dead", "list", "--type", "deposit.paid").code())
        .isEqualTo(ExitCodes.NOTHING_MATCHED);
  }

  @Test
  void showAndFind() {
    Result r = cli("show", Long.toString(dead.get(0)), "--payload");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("status        DEAD").contains("{\"amount\":0}");
    assertThat(cli("show", "999999").code()).isEqualTo(ExitCodes.NOTHING_MATCHED);
    Result byAggregate = cli("find", "--aggregate", "order-1");
    assertThat(byAggregate.out()).contains("pay-1").contains("evt-1");
    Result byKey = cli("--json", "find", "--key", "evt-1");
    assertThat(byKey.out()).contains("\"idemKey\":\"evt-1\"");
    assertThat(cli("find", "--aggregate", "a", "--key", "b").code()).isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void requeueByIdsAndByTypeIsAudited() {
    Result r = cli("requeue", Long.toString(dead.get(0)), "--reason", "card updated");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("requeued 1");
    assertThat(lm.admin().get(dead.get(0)).orElseThrow().status()).isEqualTo(MessageStatus.PENDING);
    assertThat(lm.admin().audit(dead.get(0)))
        .singleElement()
        .satisfies(a -> assertThat(a.operator()).isEqualTo("bob"));
    assertThat(cli("requeue", "--type", "pay.init", "--reason", "all").out())
        .contains("requeued 2");
    assertThat(cli("requeue", "--type", "pay.init", "--reason", "again").code())
        .isEqualTo(ExitCodes.NOTHING_MATCHED);
  }

  @Test
  void cancelOfATicketInFlightIsRefusedWithTheReasonAndTheOthersAreCanceled() throws Exception {
    java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    LocalMessages worker = fx.build(fx.builder().replicaId("worker-3"));
    worker.register(
        "slow.op",
        m -> {
          running.countDown();
          release.await();
        },
        EngineFixture.config().build());
    long busy = fx.save(worker, NewMessage.action("slow.op", "busy").build()).id();
    worker.start();
    try {
      assertThat(running.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      Result r =
          cli("cancel", Long.toString(busy), Long.toString(dead.get(1)), "--reason", "refunded");
      assertThat(r.code()).isEqualTo(ExitCodes.IN_FLIGHT);
      assertThat(r.err()).isEmpty();
      assertThat(r.out())
          .contains("canceled [" + dead.get(1) + "]")
          .contains("refused: message " + busy)
          .contains("worker-3")
          .contains("pause the type or wait for the outcome");
      assertThat(lm.admin().get(busy).orElseThrow().status()).isEqualTo(MessageStatus.PENDING);
      assertThat(lm.admin().get(dead.get(1)).orElseThrow().status())
          .isEqualTo(MessageStatus.CANCELED);
    } finally {
      release.countDown();
    }
  }

  @Test
  void cancelPauseResume() {
    Result r = cli("cancel", Long.toString(dead.get(2)), "999999", "--reason", "refunded");
    assertThat(r.code()).isEqualTo(ExitCodes.NOTHING_MATCHED);
    assertThat(r.out()).contains("canceled [" + dead.get(2) + "]").contains("999999");
    assertThat(lm.admin().get(dead.get(2)).orElseThrow().status())
        .isEqualTo(MessageStatus.CANCELED);
    assertThat(cli("pause", "pay.init").code()).isZero();
    assertThat(lm.admin().paused()).containsExactly("pay.init");
    assertThat(cli("stats").out()).containsPattern("pay\\.init.*yes");
    assertThat(cli("resume", "pay.init").code()).isZero();
    assertThat(lm.admin().paused()).isEmpty();
  }

  @Test
  void purgeKeepsDeadLettersUnlessNamed() {
    cli("cancel", Long.toString(dead.get(0)), "--reason", "x");
    Result r = cli("purge", "--older-than", "0s");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("CANCELED=1");
    assertThat(lm.admin().listDead("pay.init", 0, 10)).hasSize(2);
    assertThat(cli("purge", "--older-than", "1d", "--status", "DEAD").out()).contains("DEAD=0");
    assertThat(cli("purge", "--older-than", "PT0S", "--status", "DEAD").out()).contains("DEAD=2");
  }

  @Test
  void badArgumentsFailClearlyAndChangeNothing() {
    Result missingReason = cli("requeue", Long.toString(dead.get(0)));
    assertThat(missingReason.code()).isEqualTo(ExitCodes.USAGE);
    assertThat(missingReason.err()).contains("Missing required option: '--reason=<reason>'");
    Result both = cli("requeue", "1", "--type", "pay.init", "--reason", "r");
    assertThat(both.code()).isEqualTo(ExitCodes.USAGE);
    assertThat(both.err()).contains("either message ids or --type");
    Result badDuration = cli("purge", "--older-than", "soon");
    assertThat(badDuration.code()).isEqualTo(ExitCodes.USAGE);
    assertThat(badDuration.err()).contains("'soon' is not a duration");
    Result pending = cli("purge", "--older-than", "0s", "--status", "PENDING");
    assertThat(pending.code()).isEqualTo(ExitCodes.USAGE);
    Result badType = cli("pause", "bad type!");
    assertThat(badType.code()).isEqualTo(ExitCodes.USAGE);
    assertThat(badType.err()).contains("characters outside");
    assertThat(lm.admin().listDead("pay.init", 0, 10)).hasSize(3);
    assertThat(lm.admin().paused()).isEmpty();
    assertThat(fx.countAll()).isEqualTo(4);
  }

  @Test
  void unreachableDatabaseIsExitCodeThree() {
    StringWriter err = new StringWriter();
    int code =
        Main.run(
            new String[] {"--jdbc-url", "jdbc:postgresql://127.0.0.1:1/none", "stats"},
            new PrintWriter(new StringWriter()),
            new PrintWriter(err, true));
    assertThat(code).isEqualTo(ExitCodes.DATABASE);
    assertThat(err.toString()).startsWith("error: cannot connect");
  }

  @Test
  void schemaPrintsDdlWithoutAConnection() {
    StringWriter out = new StringWriter();
    int code =
        Main.run(
            new String[] {"--table", "ops_msg", "schema", "--dialect", "mariadb"},
            new PrintWriter(out, true),
            new PrintWriter(new StringWriter()));
    assertThat(code).isZero();
    assertThat(out.toString())
        .contains("CREATE TABLE IF NOT EXISTS ops_msg (")
        .contains("UTC")
        .contains("ops_msg_audit");
    assertThat(
            Main.run(
                new String[] {"--table", "x;drop", "schema", "--dialect", "h2"},
                new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter())))
        .isEqualTo(ExitCodes.USAGE);
    assertThat(HandlerConfig.defaults()).isNotNull();
    assertThat(Duration.ZERO).isZero();
  }
}
