package io.localmessage.spring.quickstart;

import io.localmessage.spring.LocalMessageHandler;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

@Component
public class PointsHandler {
  private static final Logger log = LoggerFactory.getLogger(PointsHandler.class);

  /** What the tests look at: each call with the time it started. */
  public record Call(PointsAdded event, long startedNanos) {}

  private final List<Call> calls = new CopyOnWriteArrayList<>();

  @LocalMessageHandler("points.add")
  public void addPoints(PointsAdded event) {
    calls.add(new Call(event, System.nanoTime()));
    // call the points service here, passing event.orderId() as its idempotency key
    log.info("adding {} points for order {}", event.points(), event.orderId());
  }

  public List<Call> calls() {
    return calls;
  }
}
