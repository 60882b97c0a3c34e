package io.localmessage.demo;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * The reconciliation job: compares the channel's records, the deposits and the ledger entries, and
 * lists every difference. A clean run has none.
 */
final class Reconciliation {
  /** Final states a deposit may end in. */
  static final Set<String> FINAL =
      Set.of("LEDGER_APPLIED", "PAYMENT_FAILED", "PAYMENT_MANUAL_REVIEW");

  final Map<String, Long> depositsByState = new TreeMap<>();
  final List<String> differences = new ArrayList<>();
  long channelSucceeded;
  long channelRejected;
  long paidDeposits;
  long ledgerEntries;
  long ledgerDistinct;
  long lost;
  long doubleApplied;
  long deadTickets;

  /** created -> LEDGER_APPLIED of every applied deposit. */
  final List<Long> latenciesMillis = new ArrayList<>();

  /** The same, leg by leg: payment, relay, consumer, confirmation. */
  final Map<Leg, List<Long>> legs = new java.util.EnumMap<>(Leg.class);

  /** The hops of a deposit from created to LEDGER_APPLIED, measured on the demo JVM's clock. */
  enum Leg {
    PAYMENT("payment", "created -> PAYMENT_SUCCEEDED (channel, retries with backoff)"),
    RELAY("relay", "PAYMENT_SUCCEEDED -> record sent to Kafka"),
    CONSUMER("consumer", "record sent -> ledger entry applied (inbox consumer)"),
    CONFIRMATION("confirmation", "ledger entry -> LEDGER_APPLIED (ledger.applied over HTTP)");

    final String label;
    final String what;

    Leg(String label, String what) {
      this.label = label;
      this.what = what;
    }
  }

  static Reconciliation run(DataSource deposits, DataSource ledger, PaymentChannel channel)
      throws SQLException {
    Reconciliation r = new Reconciliation();
    Map<String, String> state = new HashMap<>();
    Map<String, long[]> steps = new HashMap<>();
    try (Connection c = deposits.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT id, status, created_ms, paid_ms, confirmed_ms FROM deposit");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String id = rs.getString(1);
        String s = rs.getString(2);
        state.put(id, s);
        r.depositsByState.merge(s, 1L, Long::sum);
        if (s.equals("LEDGER_APPLIED")) {
          steps.put(id, new long[] {rs.getLong(3), rs.getLong(4), -1, -1, rs.getLong(5)});
        }
      }
    }
    Map<String, Integer> entries = new HashMap<>();
    try (Connection c = ledger.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT deposit_id, published_ms, applied_ms FROM ledger_entry");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String id = rs.getString(1);
        entries.merge(id, 1, Integer::sum);
        r.ledgerEntries++;
        long[] t = steps.get(id);
        if (t != null && t[2] < 0) {
          t[2] = rs.getLong(2);
          t[3] = rs.getLong(3);
        }
      }
    }
    for (Leg leg : Leg.values()) {
      r.legs.put(leg, new ArrayList<>());
    }
    for (long[] t : steps.values()) {
      r.latenciesMillis.add(t[4] - t[0]);
      if (t[2] >= 0) {
        r.legs.get(Leg.PAYMENT).add(t[1] - t[0]);
        r.legs.get(Leg.RELAY).add(t[2] - t[1]);
        r.legs.get(Leg.CONSUMER).add(t[3] - t[2]);
        r.legs.get(Leg.CONFIRMATION).add(t[4] - t[3]);
      }
    }
    r.ledgerDistinct = entries.size();
    r.deadTickets =
        count(deposits, "SELECT COUNT(*) FROM " + DepositService.TABLE + " WHERE status = 2");

    Set<String> charged = new HashSet<>();
    for (PaymentChannel.Charge ch : channel.charges.values()) {
      if (ch.status().equals("SUCCEEDED")) {
        charged.add(ch.orderId().substring("ch-".length()));
        r.channelSucceeded++;
      } else {
        r.channelRejected++;
      }
    }
    for (Map.Entry<String, String> d : state.entrySet()) {
      String id = d.getKey();
      String s = d.getValue();
      boolean paid = s.equals("PAYMENT_SUCCEEDED") || s.equals("LEDGER_APPLIED");
      r.paidDeposits += paid ? 1 : 0;
      int n = entries.getOrDefault(id, 0);
      if (!FINAL.contains(s)) {
        r.differences.add("deposit " + id + " did not converge: still " + s);
      }
      if (paid && !charged.contains(id)) {
        r.differences.add("deposit " + id + " is " + s + " but the channel has no charge");
      }
      if (!paid && charged.contains(id)) {
        r.differences.add(
            "deposit "
                + id
                + " is "
                + s
                + " but the channel charged it"
                + (s.equals("PAYMENT_MANUAL_REVIEW") ? " (manual review: settle by hand)" : ""));
      }
      if (paid && n == 0) {
        r.lost++;
        r.differences.add("deposit " + id + " was paid but has no ledger entry (lost)");
      }
      if (n > 1) {
        r.doubleApplied += n - 1;
        r.differences.add("deposit " + id + " has " + n + " ledger entries (double-applied)");
      }
      if (!paid && n > 0) {
        r.differences.add("deposit " + id + " is " + s + " but has a ledger entry");
      }
    }
    for (String id : entries.keySet()) {
      if (!state.containsKey(id)) {
        r.differences.add("ledger entry for unknown deposit " + id);
      }
    }
    for (String id : charged) {
      if (!state.containsKey(id)) {
        r.differences.add("channel charge for unknown deposit " + id);
      }
    }
    return r;
  }

  boolean clean() {
    return differences.isEmpty();
  }

  String percentiles() {
    return percentiles(latenciesMillis);
  }

  static String percentiles(List<Long> millis) {
    if (millis.isEmpty()) {
      return "n/a";
    }
    List<Long> l = new ArrayList<>(millis);
    l.sort(null);
    return String.format(
        "p50 %d ms, p95 %d ms, p99 %d ms, max %d ms",
        pick(l, 0.50), pick(l, 0.95), pick(l, 0.99), l.get(l.size() - 1));
  }

  /** The {@code q} quantile of created -> LEDGER_APPLIED, or -1 without data. */
  long endToEnd(double q) {
    if (latenciesMillis.isEmpty()) {
      return -1;
    }
    List<Long> l = new ArrayList<>(latenciesMillis);
    l.sort(null);
    return pick(l, q);
  }

  /** The leg's share of the mean end-to-end latency, in percent. */
  double shareOfMean(Leg leg) {
    double total = latenciesMillis.stream().mapToLong(Long::longValue).average().orElse(0);
    double part = legs.get(leg).stream().mapToLong(Long::longValue).average().orElse(0);
    return total <= 0 ? 0 : 100 * part / total;
  }

  private static long pick(List<Long> sorted, double q) {
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
  }

  static long count(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
