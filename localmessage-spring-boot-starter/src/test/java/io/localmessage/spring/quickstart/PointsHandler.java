package io.localmessage.spring.quickstart;

import io.localmessage.spring.LocalMessageHandler;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

@Component
public class PointsHandler {
  private final PointsGrantRepository grants;

  public PointsHandler(PointsGrantRepository grants) {
    this.grants = grants;
  }

  /**
   * Runs at least once per message: again after a crash or a timeout, and for a new message of the
   * same order. The grant's primary key is the order id, so the points are granted once.
   */
  @LocalMessageHandler("points.add")
  @Transactional
  public void addPoints(PointsAdded event) {
    if (!grants.existsById(event.orderId())) {
      grants.save(new PointsGrant(event.orderId(), event.points()));
    }
  }
}
