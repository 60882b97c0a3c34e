package io.localmessage.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class TokenSessionsTest {
  private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T00:00:00Z"));
  private final TokenSessions sessions =
      new TokenSessions("the-console-token-123", Duration.ofHours(8), clock);

  @Test
  void theTokenMustMatchExactly() {
    assertThat(sessions.tokenMatches("the-console-token-123")).isTrue();
    assertThat(sessions.tokenMatches("the-console-token-12")).isFalse();
    assertThat(sessions.tokenMatches("the-console-token-1234")).isFalse();
    assertThat(sessions.tokenMatches(null)).isFalse();
  }

  @Test
  void aLoginCookieNamesItsOperatorUntilItExpires() {
    String cookie = sessions.issue(" Zoë O'Neil ");
    assertThat(sessions.verify(cookie)).isEqualTo("Zoë O'Neil");
    clock.advance(Duration.ofHours(8).minusSeconds(1));
    assertThat(sessions.verify(cookie)).isEqualTo("Zoë O'Neil");
    clock.advance(Duration.ofSeconds(1));
    assertThat(sessions.verify(cookie)).isNull();
  }

  @Test
  void tamperedOrForeignCookiesAreRefused() {
    String cookie = sessions.issue("alice");
    String[] parts = cookie.split("\\.");
    String longer = parts[0] + "." + (Long.parseLong(parts[1]) + 86_400) + "." + parts[2];
    assertThat(sessions.verify(longer)).isNull();
    String renamed = "Ym9i" + cookie.substring(cookie.indexOf('.'));
    assertThat(sessions.verify(renamed)).isNull();
    TokenSessions other = new TokenSessions("another-token-4567", Duration.ofHours(8), clock);
    assertThat(other.verify(cookie)).isNull();
    assertThat(sessions.verify("garbage")).isNull();
    assertThat(sessions.verify("a.b")).isNull();
    assertThat(sessions.verify(null)).isNull();
  }

  @Test
  void everyLoginIsANewSessionEvenInTheSameInstant() {
    String first = sessions.issue("alice");
    String second = sessions.issue("alice");
    assertThat(first).isNotEqualTo(second);
    assertThat(sessions.verify(first)).isEqualTo("alice");
    assertThat(sessions.verify(second)).isEqualTo("alice");
    assertThat(sessions.csrfFor(first)).isNotEqualTo(sessions.csrfFor(second));
  }

  @Test
  void theCsrfValueBelongsToOneLogin() {
    String a = sessions.issue("alice");
    String b = sessions.issue("bob");
    assertThat(sessions.csrfMatches(a, sessions.csrfFor(a))).isTrue();
    assertThat(sessions.csrfMatches(a, sessions.csrfFor(b))).isFalse();
    assertThat(sessions.csrfMatches(a, null)).isFalse();
    assertThat(sessions.csrfMatches(a, "")).isFalse();
  }

  @Test
  void operatorNamesArePrintableAndShort() {
    assertThat(TokenSessions.validName("alice")).isTrue();
    assertThat(TokenSessions.validName(" ")).isFalse();
    assertThat(TokenSessions.validName(null)).isFalse();
    assertThat(TokenSessions.validName("a\nb")).isFalse();
    assertThat(TokenSessions.validName("x".repeat(65))).isFalse();
    assertThat(TokenSessions.validName("eve\u202e")).isFalse();
    assertThat(TokenSessions.validName("eve\u2066x\u2069")).isFalse();
  }
}
