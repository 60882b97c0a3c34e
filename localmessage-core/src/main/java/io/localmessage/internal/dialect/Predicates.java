package io.localmessage.internal.dialect;

import io.localmessage.spi.Dialect;

/**
 * The conditions every claim and sweep share, written once. {@code m} is the alias of the message
 * row being claimed.
 */
public final class Predicates {
  private Predicates() {}

  /**
   * A message of one biz type (the first bound parameter) that is due now on the database clock and
   * has attempts left (or a cap not resolved yet).
   */
  public static String due(Dialect d, String m) {
    return m
        + ".biz_type = ? AND "
        + m
        + ".status = 0 AND "
        + m
        + ".next_retry_at <= "
        + d.now()
        + " AND ("
        + m
        + ".max_attempts = 0 OR "
        + m
        + ".attempts < "
        + m
        + ".max_attempts)";
  }

  /**
   * The message heads its aggregate: no older PENDING or DEAD message of the same biz type and
   * aggregate exists. A DEAD head blocks its aggregate until an operator requeues or cancels it.
   */
  public static String headOfAggregate(String table, String m) {
    return "("
        + m
        + ".aggregate_id IS NULL OR NOT EXISTS (SELECT 1 FROM "
        + table
        + " o WHERE o.aggregate_id = "
        + m
        + ".aggregate_id AND o.biz_type = "
        + m
        + ".biz_type AND o.id < "
        + m
        + ".id AND o.status IN (0, 2)))";
  }

  /**
   * A PENDING message whose last allowed delivery was claimed and whose lease ran out: the sweep
   * moves it to DEAD. Without an alias.
   */
  public static String exhausted(Dialect d) {
    return "status = 0 AND max_attempts > 0 AND attempts >= max_attempts AND next_retry_at <= "
        + d.now();
  }

  /** {@code ?, ?, ...}: {@code n} bind parameters. */
  public static String placeholders(int n) {
    StringBuilder sb = new StringBuilder(n * 3);
    for (int i = 0; i < n; i++) {
      sb.append(i == 0 ? "?" : ", ?");
    }
    return sb.toString();
  }
}
