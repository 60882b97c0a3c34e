package io.localmessage.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.HandlerConfig;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The slot rules of docs/design.md 8.6: a claim takes slots of its type and of the replica total,
 * both or neither; after a full claim the poller is woken once half the slots are free, or for
 * handlers much slower than a claim once an eighth of them (or what frees during one claim, if
 * more) is free.
 */
class SlotsTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private static Registration type(int typeConcurrency, int engineConcurrency) {
    return new Registration(
        "t",
        m -> {},
        null,
        null,
        HandlerConfig.builder().concurrency(typeConcurrency).build(),
        engineConcurrency);
  }

  /** Whether the poller was woken: a set signal ends its wait at once, else it waits it out. */
  private static boolean signalled(Signal s, boolean expected) {
    long start = System.nanoTime();
    Duration max = expected ? Duration.ofSeconds(5) : Duration.ofMillis(300);
    s.await(max, () -> true);
    long took = System.nanoTime() - start;
    return expected
        ? took < TimeUnit.SECONDS.toNanos(3)
        : took < max.toNanos() - TimeUnit.MILLISECONDS.toNanos(10);
  }

  @Test
  void aReservationTakesTheTypesSlotsAndTheTotalsOrNeither() {
    Slots slots = new Slots(10, new Signal(Ticker.SYSTEM));
    Registration capped = type(3, 10);
    assertThat(slots.tryReserve(capped, 0)).as("nothing to reserve").isFalse();
    assertThat(slots.tryReserve(capped, 4)).as("more than the type's 3").isFalse();
    assertThat(slots.available()).as("a refused reservation gives the total back").isEqualTo(10);
    assertThat(slots.allFree()).isTrue();
    assertThat(slots.tryReserve(capped, 3)).isTrue();
    assertThat(slots.available()).isEqualTo(7);
    assertThat(slots.allFree()).isFalse();
    assertThat(capped.slots.availablePermits()).isZero();

    Registration other = type(0, 10);
    assertThat(slots.tryReserve(other, 8)).as("more than the 7 left in total").isFalse();
    assertThat(other.slots.availablePermits()).isEqualTo(10);
    assertThat(slots.tryReserve(other, 7)).isTrue();
    assertThat(slots.available()).isZero();

    slots.release(capped, 3);
    slots.release(other, 6);
    assertThat(slots.available()).isEqualTo(9);
    assertThat(slots.allFree()).isFalse();
    slots.release(other, 1);
    assertThat(slots.allFree()).isTrue();
    assertThat(capped.slots.availablePermits()).isEqualTo(3);
  }

  @Test
  void handlersAboutAsFastAsAClaimWakeThePollerAtHalfTheSlots() {
    Slots slots = new Slots(100, new Signal(Ticker.SYSTEM));
    assertThat(slots.wakeThreshold(50 * MS)).as("no claim measured yet").isEqualTo(50);
    slots.claimTook(10 * MS);
    assertThat(slots.wakeThreshold(0)).as("no handler call measured yet").isEqualTo(50);
    assertThat(slots.wakeThreshold(5 * MS)).isEqualTo(50);
    assertThat(slots.wakeThreshold(20 * MS)).as("exactly twice a claim").isEqualTo(50);
    assertThat(new Slots(1, new Signal(Ticker.SYSTEM)).wakeThreshold(0))
        .as("at least one slot")
        .isEqualTo(1);
  }

  @Test
  void slowHandlersWakeThePollerAtAnEighthOrWhatFreesDuringOneClaim() {
    Slots slots = new Slots(1000, new Signal(Ticker.SYSTEM));
    slots.claimTook(10 * MS);
    assertThat(slots.wakeThreshold(21 * MS))
        .as("just over twice a claim: 1000 * 10 / 21 freed during a claim, capped at half")
        .isEqualTo(477);
    assertThat(slots.wakeThreshold(50 * MS))
        .as("1000 * 10 / 50 = 200 free during a claim")
        .isEqualTo(200);
    assertThat(slots.wakeThreshold(30 * MS)).as("1000 * 10 / 30 rounded up").isEqualTo(334);
    assertThat(slots.wakeThreshold(1000 * MS)).as("an eighth of the slots at least").isEqualTo(125);
    slots.claimTook(400 * MS);
    assertThat(slots.wakeThreshold(1000 * MS)).isEqualTo(400);
    assertThat(slots.wakeThreshold(801 * MS)).as("at most half").isEqualTo(500);
  }

  @Test
  void belowTheThresholdAFullClaimWaitsAndAFinishedExecutionWakesOnlyAStarvedPoller() {
    Signal signal = new Signal(Ticker.SYSTEM);
    Slots slots = new Slots(8, signal);
    Registration t = type(0, 8);
    assertThat(slots.tryReserve(t, 8)).isTrue();
    assertThat(slots.belowWakeThreshold(MS)).isTrue();

    slots.finished(t, 3, MS);
    assertThat(signalled(signal, false)).as("the poller is not waiting for slots").isFalse();

    assertThat(slots.tryReserve(t, 3)).isTrue();
    slots.starved(true);
    assertThat(slots.starved()).isTrue();
    slots.finished(t, 3, MS);
    assertThat(slots.available()).isEqualTo(3);
    assertThat(slots.belowWakeThreshold(MS)).as("3 of 8 free, the threshold is 4").isTrue();
    assertThat(signalled(signal, false)).as("below half the slots").isFalse();
    slots.finished(t, 1, MS);
    assertThat(slots.belowWakeThreshold(MS)).as("exactly half free").isFalse();
    assertThat(signalled(signal, true)).as("half the slots are free").isTrue();
    slots.starved(false);
    assertThat(slots.starved()).isFalse();
  }
}
