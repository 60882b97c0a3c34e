package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A message as built, before any database: every field kept, every limit at its exact edge. */
class NewMessageTest {

  @Test
  void everyFieldIsKeptAsGivenAndThePayloadIsNeverShownInItsText() {
    NewMessage m =
        NewMessage.event("points.grant", "order-7")
            .aggregateId("user-1")
            .destination("points-topic")
            .payload("secret card 4111")
            .header("content-type", "application/json")
            .maxAttempts(1)
            .delay(Duration.ZERO)
            .build();
    assertThat(m.kind()).isEqualTo(MessageKind.EVENT);
    assertThat(m.bizType()).isEqualTo("points.grant");
    assertThat(m.idemKey()).isEqualTo("order-7");
    assertThat(m.aggregateId()).isEqualTo("user-1");
    assertThat(m.destination()).isEqualTo("points-topic");
    assertThat(new String(m.payload(), StandardCharsets.UTF_8)).isEqualTo("secret card 4111");
    assertThat(m.headers())
        .containsExactly(java.util.Map.entry("content-type", "application/json"));
    assertThat(m.maxAttempts()).as("one attempt is the lowest cap").isEqualTo(1);
    assertThat(m.delay()).isZero();
    assertThat(m)
        .hasToString(
            "NewMessage{EVENT, bizType=points.grant, idemKey=order-7, aggregateId=user-1,"
                + " payloadBytes=16}");
    NewMessage plain = NewMessage.action("t.a", "k").build();
    assertThat(plain.maxAttempts()).as("the type's cap").isNull();
    assertThat(plain.destination()).isNull();
    assertThat(plain.delay()).isZero();
    assertThat(plain.headers()).isEmpty();
  }

  @Test
  void attemptsBelowOneAndNegativeDelaysAreRefused() {
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").maxAttempts(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxAttempts must be at least 1, was 0");
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").delay(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delay must not be negative, was PT-0.001S");
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").delay(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("delay");
    assertThat(NewMessage.action("t.a", "k").delay(Duration.ofSeconds(3)).build().delay())
        .hasSeconds(3);
  }

  /**
   * A delay has a bound every database can store (MariaDB's DATETIME ends in 9999): past it the
   * save is refused before any SQL, naming the limit, instead of failing in the database (and on
   * PostgreSQL aborting the caller's transaction) or overflowing on the way to milliseconds.
   */
  @Test
  void aDelayPastTheBoundIsRefusedNamingIt() {
    assertThat(NewMessage.MAX_DELAY).isEqualTo(Duration.ofDays(36_500));
    assertThat(NewMessage.action("t.a", "k").delay(NewMessage.MAX_DELAY).build().delay())
        .isEqualTo(NewMessage.MAX_DELAY);
    for (Duration tooLong :
        new Duration[] {
          Duration.ofDays(365L * 10_000),
          Duration.ofSeconds(Long.MAX_VALUE),
          NewMessage.MAX_DELAY.plusMillis(1)
        }) {
      assertThatThrownBy(() -> NewMessage.action("t.a", "k").delay(tooLong))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("delay must be at most PT876000H (100 years), was " + tooLong);
    }
  }

  @Test
  void headersAreCheckedByNameValueAndEncodedSize() {
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").header("h", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("header 'h' value must not be null");
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").header("h", "a\u0000b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("header 'h' value ");
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").header(" ", "v"))
        .hasMessage("header name must not be blank");
    // {"h":"..."} is 8 characters around the value
    String fits = "x".repeat(NewMessage.MAX_HEADERS_LENGTH - 8);
    assertThat(NewMessage.action("t.a", "k").header("h", fits).build().headers().get("h"))
        .isEqualTo(fits);
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").header("h", fits + "x").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("headers encode to 4097 characters, longer than the limit 4096");
  }

  @Test
  void optionalKeysAreCheckedOnlyWhenGiven() {
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").aggregateId(" ").build())
        .hasMessage("aggregateId must not be blank");
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").destination("d".repeat(129)).build())
        .hasMessage("destination is 129 characters, longer than the limit 128");
    assertThatThrownBy(() -> NewMessage.action("t.a", "k").destination("a\ud800").build())
        .hasMessageStartingWith("destination ");
    assertThat(NewMessage.action("t.a", "k").destination("d".repeat(128)).build().destination())
        .hasSize(128);
  }
}
