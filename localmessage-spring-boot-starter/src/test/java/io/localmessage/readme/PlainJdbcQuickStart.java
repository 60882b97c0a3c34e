package io.localmessage.readme;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** The README's ten lines, compiled and run by {@code PlainJdbcQuickStartTest}. */
public final class PlainJdbcQuickStart {
  /** The points service: grants once per key. */
  public interface Points {
    void grant(String idempotencyKey, byte[] payload);
  }

  /** The application's own table. */
  public interface Orders {
    void insert(Connection connection, String orderId) throws SQLException;
  }

  public static LocalMessages placeOrder(
      DataSource dataSource, Points points, Orders orders, String orderId, String json) {
    // tag::quickstart[]
    LocalMessages lm = LocalMessages.builder(dataSource).autoCreateSchema(true).build();
    // runs at least once per message: the points service grants once per key
    lm.register(
        "points.add", m -> points.grant(m.idemKey(), m.payload()), HandlerConfig.defaults());
    lm.start();

    // the order and its message commit together, or neither; then a worker starts on it at once
    lm.inTransaction(
        conn -> {
          orders.insert(conn, orderId);
          return lm.save(conn, NewMessage.action("points.add", orderId).payload(json).build());
        });
    // end::quickstart[]
    return lm;
  }

  private PlainJdbcQuickStart() {}
}
