package io.localmessage.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The io workload's row specs and backlog budget; no database, no endpoint. */
class IoRowsTest {

  @Test
  void rowsParseWithTheirSlotsAndPeersDefaultToThePeerThreads() {
    assertThat(IoDrain.Row.parse("async-5000", 20))
        .isEqualTo(new IoDrain.Row(IoDrain.Kind.ASYNC, 5000, 1));
    assertThat(IoDrain.Row.parse(" Platform-64 ", 20))
        .isEqualTo(new IoDrain.Row(IoDrain.Kind.PLATFORM, 64, 1));
    assertThat(IoDrain.Row.parse("dbscheduler", 20))
        .isEqualTo(new IoDrain.Row(IoDrain.Kind.DBSCHEDULER, 20, 1));
    assertThat(IoDrain.Row.parse("outbox-50", 20))
        .isEqualTo(new IoDrain.Row(IoDrain.Kind.OUTBOX, 50, 1));
    assertThat(IoDrain.Row.parse("floor-1_000", 20).id()).isEqualTo("floor-1000");
    assertThat(IoDrain.Row.parse("async-1000x2", 20))
        .isEqualTo(new IoDrain.Row(IoDrain.Kind.ASYNC, 1000, 2));
    assertThat(IoDrain.Row.parse("async-1000x2", 20).id()).isEqualTo("async-1000x2");
    assertThat(IoDrain.Row.parse("floor-5000x4", 20).label()).endsWith(", 4 HTTP clients");
  }

  @Test
  void badRowsAreRefusedWithWhatIsAccepted() {
    assertThatThrownBy(() -> IoDrain.Row.parse("async", 20)).hasMessageContaining("-C");
    assertThatThrownBy(() -> IoDrain.Row.parse("reactive-10", 20))
        .hasMessageContaining("platform-C");
    assertThatThrownBy(() -> IoDrain.Row.parse("async-0", 20)).hasMessageContaining("between");
    assertThatThrownBy(() -> IoDrain.Row.parse("async-20001", 20)).hasMessageContaining("between");
    assertThatThrownBy(() -> IoDrain.Row.parse("outbox-20x2", 20))
        .hasMessageContaining("for engine and floor rows");
    assertThatThrownBy(() -> IoDrain.Row.parse("async-1000x0", 20)).hasMessageContaining("1 to 64");
    assertThatThrownBy(() -> IoDrain.Row.parse("async-1000xy", 20))
        .hasMessageContaining("bad client count");
    assertThatThrownBy(() -> Options.parse(new String[] {"--io-server", "netty"}))
        .hasMessageContaining("jetty or jdk");
  }

  @Test
  void defaultsAreTheIssuesRowsAndBacklogs() {
    Options o = Options.parse(new String[0]);
    assertThat(o.ioN()).isEqualTo(50_000);
    assertThat(o.ioPeerN()).isEqualTo(5_000);
    assertThat(o.ioLatencyMs()).isEqualTo(50);
    assertThat(o.ioServer()).isEqualTo("jetty");
    assertThat(o.ioRows().stream().map(IoDrain.Row::id))
        .containsExactly(
            "platform-64",
            "platform-1000",
            "virtual-1000",
            "async-1000",
            "async-5000",
            "floor-5000",
            "dbscheduler-20",
            "outbox-20");
    assertThat(IoWorkload.goalRow(o)).contains(new IoDrain.Row(IoDrain.Kind.ASYNC, 5000, 1));
  }

  @Test
  void aRowsBacklogIsCutToWhatItsIdealRateDrainsInTheBudget() {
    Options o = Options.parse(new String[0]);
    // 64 slots / 50 ms = 1,280/s, 76,800 in 60 s: the full 50,000
    assertThat(IoWorkload.backlog(o, IoDrain.Row.parse("platform-64", 20))).isEqualTo(50_000);
    // peers drain their own backlog, 20 / 50 ms = 400/s would allow 24,000
    assertThat(IoWorkload.backlog(o, IoDrain.Row.parse("dbscheduler", 20))).isEqualTo(5_000);
    Options slow = Options.parse(new String[] {"--io-latency-ms", "500"});
    // 64 / 500 ms = 128/s: 7,680 in 60 s
    assertThat(IoWorkload.backlog(slow, IoDrain.Row.parse("platform-64", 20))).isEqualTo(7_680);
    // 20 / 500 ms = 40/s: 2,400
    assertThat(IoWorkload.backlog(slow, IoDrain.Row.parse("outbox", 20))).isEqualTo(2_400);
  }
}
