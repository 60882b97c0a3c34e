package io.localmessage.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The main job end to end on its zero-setup infrastructure (embedded PostgreSQL and an in-JVM Kafka
 * broker), small numbers, every fault on and one replica killed, traced; and the same with the
 * ledger's inbox disabled, which the reconciliation must catch.
 */
class DepositDemoTest {

  private static DemoOptions options(String... args) {
    DemoOptions o = new DemoOptions();
    new CommandLine(o).parseArgs(args);
    return o;
  }

  private static String run(DemoOptions o, boolean expectOk) throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    boolean ok;
    try (PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
      ok = DepositDemo.run(o, out);
    }
    String report = buf.toString(StandardCharsets.UTF_8);
    System.out.println(report);
    assertThat(ok).as(report).isEqualTo(expectOk);
    return report;
  }

  @Test
  void convergesUnderFaultsWithAReplicaKilled() throws Exception {
    String report =
        run(
            options(
                "--deposits",
                "300",
                "--rate",
                "200",
                "--points-orders",
                "150",
                "--chaos",
                "--trace",
                "--quiet",
                "--deadline-seconds",
                "120"),
            true);
    assertThat(report)
        .contains("chaos: replica deposit-1 stopped abruptly")
        .contains("lost                        0")
        .contains("double-applied              0")
        .contains("RECONCILIATION OK");
    assertThat(report).containsPattern("inbox duplicates caught     [1-9]");
    // each leg of created -> LEDGER_APPLIED, with its percentiles (no timing is asserted)
    for (String leg : new String[] {"payment", "relay", "consumer", "confirmation"}) {
      assertThat(report).containsPattern("\\n  " + leg + " +p50 \\d+ ms, p95 \\d+ ms");
    }
    assertThat(report).contains("latency goal                p50 <= 1000 ms and p99 <= 5000 ms: ");
    // --trace: one deposit's trace, from the request through Kafka and back over HTTP
    String trace = report.substring(report.indexOf("=== one deposit's trace ==="));
    assertThat(trace)
        .containsPattern("deposit-service +POST /deposits")
        .containsPattern("deposit-service +    handle payment.initiate \\[attempt 1, ")
        .containsPattern("deposit-service +\\s+publish deposit.paid \\[acked\\]")
        .containsPattern("ledger-service +\\s+inbox ledger \\[applied\\]")
        .containsPattern("deposit-service +\\s+receive ledger-callback \\[applied\\]");
  }

  @Test
  void withoutTheLedgerInboxTheReconciliationFails() throws Exception {
    String report =
        run(
            options(
                "--deposits",
                "150",
                "--rate",
                "200",
                "--points-orders",
                "0",
                "--duplicate-publish-rate",
                "0.3",
                "--ledger-without-inbox",
                "--quiet",
                "--deadline-seconds",
                "120"),
            false);
    assertThat(report)
        .containsPattern("double-applied              [1-9]")
        .contains("ledger entries (double-applied)")
        .contains("RECONCILIATION FAILED");
  }
}
