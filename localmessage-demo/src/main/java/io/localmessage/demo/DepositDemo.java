package io.localmessage.demo;

import io.localmessage.test.kafka.TestBroker;
import io.micrometer.core.instrument.search.Search;
import java.io.PrintStream;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;

/**
 * The main job: the deposit -> payment -> Kafka -> ledger flow under injected faults, and the order
 * -> points hop, on real PostgreSQL and Kafka (embedded by default), ending with a reconciliation
 * report. Exits 1 when the books do not balance.
 */
public final class DepositDemo {
  private DepositDemo() {}

  public static void main(String[] args) throws Exception {
    DemoOptions o = new DemoOptions();
    CommandLine cl = new CommandLine(o);
    try {
      cl.parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      System.err.println(e.getMessage());
      cl.usage(System.err);
      System.exit(2);
    }
    if (cl.isUsageHelpRequested()) {
      cl.usage(System.out);
      return;
    }
    int code;
    try {
      code = run(o, System.out) ? 0 : 1;
    } catch (Exception e) {
      e.printStackTrace();
      code = 3;
    }
    // exit explicitly: client libraries may leave non-daemon threads behind
    System.exit(code);
  }

  /** Runs the whole demo; returns whether reconciliation found the books balanced. */
  static boolean run(DemoOptions o, PrintStream out) throws Exception {
    long t0 = System.nanoTime();
    out.println("starting infrastructure ...");
    try (TraceRecorder traces = new TraceRecorder(o.trace);
        Infra infra = Infra.start(o);
        PaymentChannel channel =
            new PaymentChannel(o.timeoutRate, o.unavailableRate, o.rejectRate, 1500)) {
      out.println(infra.describe());
      TestBroker.ensureTopic(infra.bootstrap, DepositService.TOPIC, 4);
      DepositService deposits = new DepositService(infra, o, channel.baseUrl(), traces);
      LedgerService ledger = new LedgerService(infra, o, deposits.callbackUrl(), traces);
      ledger.awaitReady(java.time.Duration.ofSeconds(30));
      PointsScenario points = o.pointsOrders > 0 ? new PointsScenario(infra, o.pointsOrders) : null;
      out.printf(
          "deposit service: %d replicas; faults: %.0f%% late answers after charging,"
              + " %.0f%% 503 before charging, %.0f%% rejected, %.0f%% lost relay acks%s%n",
          o.replicas,
          o.timeoutRate * 100,
          o.unavailableRate * 100,
          o.rejectRate * 100,
          o.duplicatePublishRate * 100,
          o.chaos ? ", chaos: a replica is killed mid-run" : "");

      Thread pointsThread = null;
      if (points != null) {
        pointsThread = new Thread(points::placeOrders, "points-orders");
        pointsThread.start();
      }
      long start = System.nanoTime();
      long lastPrint = start; // the first progress line after a second
      Progress progress = new Progress(deposits, ledger, t0);
      boolean crashed = false;
      long intervalNanos = TimeUnit.SECONDS.toNanos(1) / Math.max(1, o.rate);
      for (int i = 0; i < o.deposits; i++) {
        long due = start + i * intervalNanos;
        long now = System.nanoTime();
        if (due > now) {
          TimeUnit.NANOSECONDS.sleep(due - now); // pacing the producer, not synchronization
        }
        deposits.createDeposit("dep-" + i, 100 + i % 900);
        if (o.chaos && !crashed && i >= o.deposits / 2) {
          DepositService.Replica victim = deposits.crashOneReplica();
          DepositService.Replica fresh = deposits.startReplica();
          out.printf(
              "chaos: replica %s stopped abruptly (leases not released), %s started%n",
              victim.id(), fresh.id());
          crashed = true;
        }
        if (!o.quiet && System.nanoTime() - lastPrint > TimeUnit.SECONDS.toNanos(1)) {
          out.println(progress.line());
          lastPrint = System.nanoTime();
        }
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.deadlineSeconds);
      while (System.nanoTime() - deadline < 0 && !converged(deposits)) {
        if (!o.quiet) {
          out.println(progress.line());
        }
        TimeUnit.SECONDS.sleep(1); // progress wait in the demo, not a test
      }
      boolean pointsDone = true;
      if (pointsThread != null) {
        pointsThread.join(TimeUnit.SECONDS.toMillis(o.deadlineSeconds));
        pointsDone = points.awaitDone(deadline);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      Reconciliation r = Reconciliation.run(deposits.dataSource(), ledger.dataSource(), channel);
      boolean ok = r.clean();
      out.println();
      out.println("================ reconciliation report ================");
      out.printf(
          "deposits created            %d in %.1f s (%.0f/s end to end)%n",
          o.deposits, seconds, o.deposits / seconds);
      out.printf("deposits by final state     %s%n", r.depositsByState);
      out.printf(
          "channel charges             %d succeeded, %d rejected; paid deposits %d%n",
          r.channelSucceeded, r.channelRejected, r.paidDeposits);
      out.printf(
          "channel requests            %d pay/query, %d answered late (outcome unknown),"
              + " %d refused 503, %d duplicate pay requests absorbed by its idempotency%n",
          channel.requests.get() + channel.queries.get(),
          channel.lateAnswers.get(),
          channel.unavailable.get(),
          channel.duplicatePayRequests.get());
      out.printf(
          "ledger entries              %d for %d deposits (paid deposits %d)%n",
          r.ledgerEntries, r.ledgerDistinct, r.paidDeposits);
      out.printf(
          "kafka relay                 %d acks, %d acks 'lost' on purpose (republished)%n",
          deposits.relayAcks.get(), deposits.injectedLostAcks.get());
      out.printf(
          "inbox duplicates caught     %s%n",
          o.ledgerWithoutInbox
              ? "inbox disabled (" + ledger.rawDeliveries.get() + " deliveries applied blindly)"
              : String.valueOf((long) counter(ledger, "localmessage.inbox.duplicates")));
      out.printf("dead tickets                %d (manual review)%n", r.deadTickets);
      out.printf("lost                        %d%n", r.lost);
      out.printf("double-applied              %d%n", r.doubleApplied);
      out.printf("end-to-end latency          created -> LEDGER_APPLIED: %s%n", r.percentiles());
      for (Reconciliation.Leg leg : Reconciliation.Leg.values()) {
        out.printf(
            "  %-25s %s (%.0f%% of the mean): %s%n",
            leg.label, Reconciliation.percentiles(r.legs.get(leg)), r.shareOfMean(leg), leg.what);
      }
      long p50 = r.endToEnd(0.50);
      long p99 = r.endToEnd(0.99);
      out.printf(
          "latency goal                p50 <= 1000 ms and p99 <= 5000 ms: %s%n",
          p50 < 0 ? "not measured" : p50 <= 1000 && p99 <= 5000 ? "met" : "NOT met");
      if (points != null) {
        long[] b = points.books();
        boolean pointsOk = pointsDone && b[0] == b[1] && b[1] == b[2] && b[3] == b[4];
        out.printf(
            "order -> points (HTTP)      %d orders, %d points rows, %d distinct, points"
                + " %d of %d; %d requests, %d refused, %d answers lost, %d duplicates caught: %s%n",
            b[0],
            b[1],
            b[2],
            b[4],
            b[3],
            points.requests.get(),
            points.refused.get(),
            points.lostAnswers.get(),
            points.duplicates.get(),
            pointsOk ? "OK" : "MISMATCH");
        ok &= pointsOk;
      }
      if (!r.differences.isEmpty()) {
        out.println("differences (" + r.differences.size() + "):");
        r.differences.stream().limit(50).forEach(d -> out.println("  " + d));
      }
      out.println(
          ok ? "RECONCILIATION OK: nothing lost, nothing applied twice" : "RECONCILIATION FAILED");
      if (points != null) {
        points.close();
      }
      ledger.close();
      deposits.close();
      if (traces.on()) {
        // after the services stopped: every span of the flow has ended
        String tree = traces.tree();
        out.println();
        out.println("================ one deposit's trace ================");
        out.print(tree == null ? "no deposit was traced the whole way\n" : tree);
      }
      return ok;
    }
  }

  private static boolean converged(DepositService deposits) throws Exception {
    return Reconciliation.count(
            deposits.dataSource(),
            "SELECT COUNT(*) FROM deposit WHERE status"
                + " IN ('CREATED', 'PAYMENT_PENDING', 'PAYMENT_SUCCEEDED')")
        == 0;
  }

  private static double counter(LedgerService l, String name) {
    return Search.in(l.metrics).name(name).counters().stream().mapToDouble(c -> c.count()).sum();
  }
}
