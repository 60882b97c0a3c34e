package io.localmessage.demo;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
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
  final List<Long> latenciesMillis = new ArrayList<>();

  static Reconciliation run(DataSource deposits, DataSource ledger, PaymentChannel channel)
      throws SQLException {
    Reconciliation r = new Reconciliation();
    Map<String, String> state = new HashMap<>();
    try (Connection c = deposits.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT id, status, created_at, updated_at FROM deposit");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String id = rs.getString(1);
        String s = rs.getString(2);
        state.put(id, s);
        r.depositsByState.merge(s, 1L, Long::sum);
        if (s.equals("LEDGER_APPLIED")) {
          LocalDateTime created = rs.getObject(3, LocalDateTime.class);
          LocalDateTime updated = rs.getObject(4, LocalDateTime.class);
          r.latenciesMillis.add(Duration.between(created, updated).toMillis());
        }
      }
    }
    Map<String, Integer> entries = new HashMap<>();
    try (Connection c = ledger.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT deposit_id FROM ledger_entry");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        entries.merge(rs.getString(1), 1, Integer::sum);
        r.ledgerEntries++;
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
    if (latenciesMillis.isEmpty()) {
      return "n/a";
    }
    List<Long> l = new ArrayList<>(latenciesMillis);
    l.sort(null);
    return String.format(
        "p50 %d ms, p95 %d ms, p99 %d ms, max %d ms",
        pick(l, 0.50), pick(l, 0.95), pick(l, 0.99), l.get(l.size() - 1));
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
