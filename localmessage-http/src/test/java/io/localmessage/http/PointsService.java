package io.localmessage.http;

import io.localmessage.PermanentFailure;
import io.localmessage.Schema;
import io.localmessage.inbox.Inbox;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The receiving service of the tests: its own database (schema), the library's inbox table, and a
 * {@code points_entry} table with <em>no</em> unique key on the order, so only the inbox can stop a
 * second award.
 */
final class PointsService {
  static final String CONSUMER = "points";
  private static final Pattern BODY = Pattern.compile("\\{\"orderId\":(\\d+),\"points\":(\\d+)\\}");

  final DataSource ds;
  final IdempotentReceiver receiver;

  /** Work invocations (each ran inside a transaction; only committed ones count as awards). */
  final AtomicInteger workRuns = new AtomicInteger();

  PointsService(TestDatabase db, DataSource ds) {
    this.ds = ds;
    Schema.create(ds, "local_message", "local_inbox");
    String id =
        db.kind() == TestDatabase.Kind.MARIADB
            ? "id BIGINT AUTO_INCREMENT PRIMARY KEY"
            : "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY";
    Sql.update(
        ds,
        "CREATE TABLE points_entry (" + id + ", order_id BIGINT NOT NULL, points INT NOT NULL)");
    this.receiver = IdempotentReceiver.create(Inbox.create(ds));
  }

  static String body(long orderId, int points) {
    return "{\"orderId\":" + orderId + ",\"points\":" + points + "}";
  }

  IdempotentEndpoint endpoint() {
    return IdempotentEndpoint.create(ds, receiver, CONSUMER, (c, body, headers) -> award(c, body));
  }

  /** The effect: one points row. "reject" is refused for good, "boom" fails (retryable). */
  void award(Connection c, byte[] body) throws Exception {
    workRuns.incrementAndGet();
    String text = new String(body, StandardCharsets.UTF_8);
    if (text.equals("reject")) {
      throw new PermanentFailure("order is not eligible for points");
    }
    if (text.equals("boom")) {
      throw new IllegalStateException("points ledger unavailable");
    }
    Matcher m = BODY.matcher(text);
    if (!m.matches()) {
      throw new PermanentFailure("unreadable body");
    }
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO points_entry (order_id, points) VALUES (?, ?)")) {
      ps.setLong(1, Long.parseLong(m.group(1)));
      ps.setInt(2, Integer.parseInt(m.group(2)));
      ps.executeUpdate();
    }
  }

  long rows() {
    return Sql.count(ds, "SELECT COUNT(*) FROM points_entry");
  }

  long inboxRows() {
    return Sql.count(ds, "SELECT COUNT(*) FROM local_inbox WHERE consumer = ?", CONSUMER);
  }
}
