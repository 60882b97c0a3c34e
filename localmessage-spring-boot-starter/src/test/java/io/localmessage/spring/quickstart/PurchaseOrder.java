package io.localmessage.spring.quickstart;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

@Entity
@Table(name = "purchase_order")
public class PurchaseOrder {
  @Id private String id;
  private int points;

  protected PurchaseOrder() {}

  public PurchaseOrder(String id, int points) {
    this.id = id;
    this.points = points;
  }

  public String getId() {
    return id;
  }

  public int getPoints() {
    return points;
  }
}
