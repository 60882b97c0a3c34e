package io.localmessage.demo;

import javax.sql.DataSource;

/**
 * The progress line: how far each leg of the flow is, and its rate since the previous line (not an
 * average over the run, which hides a leg that has stalled or is catching up).
 */
final class Progress {
  private final DepositService deposits;
  private final LedgerService ledger;
  private final long t0;
  private long lastNanos;
  private long[] last = new long[5];

  Progress(DepositService deposits, LedgerService ledger, long t0) {
    this.deposits = deposits;
    this.ledger = ledger;
    this.t0 = t0;
    this.lastNanos = t0;
  }

  /** One line: created, paid, published, ledger entries, confirmed, each with its rate now. */
  String line() throws Exception {
    DataSource ds = deposits.dataSource();
    long[] now = {
      Reconciliation.count(ds, "SELECT COUNT(*) FROM deposit"),
      Reconciliation.count(
          ds,
          "SELECT COUNT(*) FROM deposit WHERE status IN ('PAYMENT_SUCCEEDED', 'LEDGER_APPLIED')"),
      deposits.relayAcks.get(),
      Reconciliation.count(ledger.dataSource(), "SELECT COUNT(*) FROM ledger_entry"),
      Reconciliation.count(ds, "SELECT COUNT(*) FROM deposit WHERE status = 'LEDGER_APPLIED'")
    };
    long dead =
        Reconciliation.count(
            ds, "SELECT COUNT(*) FROM " + DepositService.TABLE + " WHERE status = 2");
    long nanos = System.nanoTime();
    double dt = Math.max(1e-3, (nanos - lastNanos) / 1e9);
    String[] names = {"created", "paid", "published", "ledger", "confirmed"};
    StringBuilder sb = new StringBuilder(String.format("[%5.1fs]", (nanos - t0) / 1e9));
    for (int i = 0; i < names.length; i++) {
      sb.append(String.format("  %s %d (%.0f/s)", names[i], now[i], (now[i] - last[i]) / dt));
    }
    sb.append("  dead ").append(dead);
    last = now;
    lastNanos = nanos;
    return sb.toString();
  }
}
