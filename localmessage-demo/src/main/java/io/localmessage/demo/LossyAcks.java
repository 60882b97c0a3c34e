package io.localmessage.demo;

import io.localmessage.BatchHandler;
import io.localmessage.Message;
import io.localmessage.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fault injection around the Kafka relay: after a successful publish, a share of the messages is
 * reported as failed, as if the relay had crashed between the broker's ack and the write-back. The
 * event is published again later, so the topic really carries duplicates for the ledger's inbox to
 * catch.
 */
final class LossyAcks implements BatchHandler {
  private final BatchHandler relay;
  private final double lossRate;
  private final AtomicInteger acks;
  private final AtomicInteger lost;

  LossyAcks(BatchHandler relay, double lossRate, AtomicInteger acks, AtomicInteger lost) {
    this.relay = relay;
    this.lossRate = lossRate;
    this.acks = acks;
    this.lost = lost;
  }

  @Override
  public List<Outcome> handle(List<Message> messages) throws Exception {
    List<Outcome> out = new ArrayList<>(relay.handle(messages));
    for (int i = 0; i < out.size(); i++) {
      if (out.get(i) != null && out.get(i).type() == Outcome.Type.SUCCESS) {
        acks.incrementAndGet();
        if (ThreadLocalRandom.current().nextDouble() < lossRate) {
          lost.incrementAndGet();
          out.set(i, Outcome.retry("injected: the broker's ack was lost after publishing"));
        }
      }
    }
    return out;
  }
}
