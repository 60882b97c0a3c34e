package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The outcomes a handler can return, as they read in logs and the stored error. */
class OutcomeTest {

  @Test
  void aPermanentFailureFromAnExceptionIsDescribedByItsClassAndMessage() {
    Outcome o = Outcome.permanent(new IllegalArgumentException("no such account"));
    assertThat(o.type()).isEqualTo(Outcome.Type.PERMANENT);
    assertThat(o.error()).isEqualTo("java.lang.IllegalArgumentException: no such account");
    assertThat(o.delay()).isNull();
    assertThat(Outcome.permanent(new IllegalStateException()).error())
        .isEqualTo("java.lang.IllegalStateException");
    assertThatThrownBy(() -> Outcome.permanent((String) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("error");
  }

  @Test
  void everyOutcomeReadsAsItsKindAndError() {
    assertThat(Outcome.success()).hasToString("SUCCESS");
    assertThat(Outcome.permanent("closed account")).hasToString("PERMANENT(closed account)");
    assertThat(Outcome.retry("busy")).hasToString("RETRY(busy)");
    Outcome notYet = Outcome.retryAfter(Duration.ofSeconds(5), "settling");
    assertThat(notYet).hasToString("RETRY_AFTER(settling)");
    assertThat(notYet.delay()).isEqualTo(Duration.ofSeconds(5));
  }
}
