package io.localmessage.spring.quickstart;

import io.localmessage.NewMessage;
import io.localmessage.spring.TransactionalMessages;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.json.JsonMapper;

@Service
public class OrderService {
  private final OrderRepository orders;
  private final TransactionalMessages messages;
  private final JsonMapper json;

  public OrderService(OrderRepository orders, TransactionalMessages messages, JsonMapper json) {
    this.orders = orders;
    this.messages = messages;
    this.json = json;
  }

  /** The order row and the ticket commit together, or neither does. */
  @Transactional
  public void placeOrder(String orderId, int points) {
    orders.save(new PurchaseOrder(orderId, points));
    messages.save(
        NewMessage.action("points.add", orderId) // idempotency key: one grant per order
            .aggregateId(orderId)
            .payload(json.writeValueAsBytes(new PointsAdded(orderId, points)))
            .build());
  }
}
