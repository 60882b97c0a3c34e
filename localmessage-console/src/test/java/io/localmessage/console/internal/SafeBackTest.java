package io.localmessage.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SafeBackTest {

  @Test
  void actionsRedirectOnlyBackIntoTheConsole() {
    String base = "/app/localmessage";
    assertThat(ConsoleActions.safeBack(base, "/app/localmessage")).isTrue();
    assertThat(ConsoleActions.safeBack(base, "/app/localmessage/dead?type=a.b&afterId=3")).isTrue();
    assertThat(ConsoleActions.safeBack(base, "/app/localmessage?x=1")).isTrue();
    assertThat(ConsoleActions.safeBack(base, "https://evil.example/app/localmessage")).isFalse();
    assertThat(ConsoleActions.safeBack(base, "//evil.example/app/localmessage")).isFalse();
    assertThat(ConsoleActions.safeBack(base, "/app/localmessagex")).isFalse();
    assertThat(ConsoleActions.safeBack(base, "/app/localmessage//evil.example")).isFalse();
    assertThat(ConsoleActions.safeBack(base, "/app/localmessage/../admin")).isFalse();
    assertThat(ConsoleActions.safeBack(base, "/app/localmessage/\\evil")).isFalse();
    assertThat(ConsoleActions.safeBack(base, "/app/localmessage/a\r\nSet-Cookie: x")).isFalse();
  }
}
