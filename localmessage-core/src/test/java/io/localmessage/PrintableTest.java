package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PrintableTest {

  @Test
  void controlAndBidirectionalCharactersAreNamedWithTheirPosition() {
    assertThat(Printable.unprintable("deploy of v2.3 — ünïcode ok")).isNull();
    assertThat(Printable.unprintable("ok\nevent=forged"))
        .isEqualTo("contains the control character U+000A at index 2");
    assertThat(Printable.unprintable("a\u0000")).contains("U+0000");
    assertThat(Printable.unprintable("\u0085next line")).contains("U+0085");
    assertThat(Printable.unprintable("txt.\u202egnp"))
        .isEqualTo("contains the bidirectional control character U+202E at index 4");
    for (int c : new int[] {0x202A, 0x202B, 0x202C, 0x202D, 0x2066, 0x2067, 0x2068, 0x2069}) {
      assertThat(Printable.unprintable("x" + (char) c)).as("U+%04X", c).isNotNull();
    }
  }

  @Test
  void escapingKeepsALineOnOneLineAndInReadingOrder() {
    assertThat(Printable.escape("plain")).isSameAs("plain");
    assertThat(Printable.escape("a\r\nb\u001b[2J\u202ec"))
        .isEqualTo("a\\u000d\\u000ab\\u001b[2J\\u202ec");
    assertThat(Printable.escape(null)).isNull();
  }
}
