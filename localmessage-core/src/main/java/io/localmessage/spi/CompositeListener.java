package io.localmessage.spi;

import java.time.Duration;
import java.util.List;

/** Fans every event out to several listeners, in order. */
final class CompositeListener implements EngineListener {
  private final List<EngineListener> targets;

  CompositeListener(List<EngineListener> targets) {
    this.targets = List.copyOf(targets);
  }

  @Override
  public void saved(String bizType, boolean duplicate) {
    targets.forEach(t -> t.saved(bizType, duplicate));
  }

  @Override
  public void saveFailed(String bizType, Throwable error) {
    targets.forEach(t -> t.saveFailed(bizType, error));
  }

  @Override
  public void claimed(String bizType, int claimed, int leaseReclaims, Duration queryTime) {
    targets.forEach(t -> t.claimed(bizType, claimed, leaseReclaims, queryTime));
  }

  @Override
  public void delivered(
      String bizType, Result result, int attempt, Duration handlerTime, Duration sinceCreated) {
    targets.forEach(t -> t.delivered(bizType, result, attempt, handlerTime, sinceCreated));
  }

  @Override
  public void casConflicts(String bizType, int count) {
    targets.forEach(t -> t.casConflicts(bizType, count));
  }

  @Override
  public void expiredLastAttempt(int count) {
    targets.forEach(t -> t.expiredLastAttempt(count));
  }

  @Override
  public void leaseRenewed(String bizType, int count) {
    targets.forEach(t -> t.leaseRenewed(bizType, count));
  }

  @Override
  public void fenced(String bizType, int count) {
    targets.forEach(t -> t.fenced(bizType, count));
  }

  @Override
  public void leaseRenewalFailed(String bizType, int count) {
    targets.forEach(t -> t.leaseRenewalFailed(bizType, count));
  }

  @Override
  public void writeBackDropped(String bizType, int count) {
    targets.forEach(t -> t.writeBackDropped(bizType, count));
  }

  @Override
  public void wakeUpSent(int requests) {
    targets.forEach(t -> t.wakeUpSent(requests));
  }
}
