package io.localmessage.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * How often the renewer looks: a sixth of the lease, so a lease renewed once a third has passed is
 * renewed with at least half of it left; never more often than every 20 ms, never less often than
 * every second (a long lease still has its renewals, and its fencing, noticed soon).
 */
class LeaseRenewerTest {
  @Test
  void theRenewerLooksEverySixthOfTheLeaseBetween20MillisecondsAndOneSecond() {
    assertThat(LeaseRenewer.tick(Duration.ofMillis(3_000))).isEqualTo(Duration.ofMillis(500));
    assertThat(LeaseRenewer.tick(Duration.ofMillis(1_200))).isEqualTo(Duration.ofMillis(200));
    assertThat(LeaseRenewer.tick(Duration.ofMillis(6_000))).isEqualTo(Duration.ofSeconds(1));
    assertThat(LeaseRenewer.tick(Duration.ofMillis(6_006))).isEqualTo(Duration.ofSeconds(1));
    assertThat(LeaseRenewer.tick(Duration.ofHours(1))).isEqualTo(Duration.ofSeconds(1));
    assertThat(LeaseRenewer.tick(Duration.ofMillis(120))).isEqualTo(Duration.ofMillis(20));
    assertThat(LeaseRenewer.tick(Duration.ofMillis(60))).isEqualTo(Duration.ofMillis(20));
    assertThat(LeaseRenewer.tick(Duration.ofMillis(126))).isEqualTo(Duration.ofMillis(21));
  }
}
