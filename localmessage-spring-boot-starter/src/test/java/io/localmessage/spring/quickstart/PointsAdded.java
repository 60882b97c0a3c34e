package io.localmessage.spring.quickstart;

public record PointsAdded(String orderId, int points) {}
