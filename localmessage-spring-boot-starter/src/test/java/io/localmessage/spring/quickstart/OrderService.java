package io.localmessage.spring.quickstart;

import io.localmessage.NewMessage;
import io.localmessage.spring.TransactionalMessages;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.json.JsonMapper;

@Service
public class OrderService {
  private final OrderRepository orders;
  private final TransactionalMessages messages; // joins the current Spring transaction
  private final JsonMapper json;

  public OrderService(OrderRepository orders, TransactionalMessages messages, JsonMapper json) {
    this.orders = orders;
    this.messages = messages;
    this.json = json;
  }

  /** The order row and its message commit together, or neither does. */
  @Transactional
  public void placeOrder(String orderId, int points) {
    orders.save(new PurchaseOrder(orderId, points));
    messages.save(
        NewMessage.action("points.add", orderId) // idempotency key: the order id
            .aggregateId(orderId)
            .payload(json.writeValueAsBytes(new PointsAdded(orderId, points)))
            .build());
    // A second save with the same key is ignored only while the first message exists: once it
    // succeeded it is deleted, and posting the same order again saves a new message. The handler
    // makes the grant once per order.
  }
}
