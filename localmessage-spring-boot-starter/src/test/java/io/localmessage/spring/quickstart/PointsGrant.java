package io.localmessage.spring.quickstart;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

@Entity
@Table(name = "points_grant")
public class PointsGrant {
  @Id private String orderId;
  private int points;

  protected PointsGrant() {}

  public PointsGrant(String orderId, int points) {
    this.orderId = orderId;
    this.points = points;
  }

  public String getOrderId() {
    return orderId;
  }

  public int getPoints() {
    return points;
  }
}
