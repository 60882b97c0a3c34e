package io.localmessage.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.MessageKind;
import io.localmessage.MessageStatus;
import io.localmessage.admin.MessageView;
import io.localmessage.console.PayloadRedactor;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PayloadPreviewTest {
  private static final MessageView TICKET =
      new MessageView(
          7,
          MessageKind.ACTION,
          "pay",
          "k",
          null,
          null,
          0,
          Map.of(),
          MessageStatus.DEAD,
          1,
          10,
          Instant.EPOCH,
          null,
          1,
          "err",
          Instant.EPOCH,
          Instant.EPOCH);

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void textUnderTheCapIsShownWhole() {
    PayloadPreview p = PayloadPreview.of(TICKET, utf8("{\"a\":1}"), PayloadRedactor.NONE, 2048);
    assertThat(p.text()).isEqualTo("{\"a\":1}");
    assertThat(p.truncated()).isFalse();
    assertThat(p.binary()).isFalse();
    assertThat(p.totalBytes()).isEqualTo(7);
  }

  @Test
  void theCapCountsUtf8BytesAndNeverSplitsACharacter() {
    // "é" is 2 bytes, the emoji 4: 1 + 2 + 4 = 7 bytes fit in 8, the next "é" would not
    String s = "aé\uD83D\uDE00éé";
    PayloadPreview p = PayloadPreview.of(TICKET, utf8(s), PayloadRedactor.NONE, 8);
    assertThat(p.text()).isEqualTo("aé\uD83D\uDE00");
    assertThat(p.truncated()).isTrue();
    assertThat(PayloadPreview.capUtf8(s, 6)).isEqualTo("aé");
    assertThat(PayloadPreview.capUtf8(s, 3)).isEqualTo("aé");
    assertThat(PayloadPreview.capUtf8(s, 2)).isEqualTo("a");
  }

  @Test
  void theRedactorSeesTheWholePayloadBeforeTheCap() {
    String payload = "x".repeat(10) + "\"card\":\"4111111111111111\"";
    PayloadRedactor mask = (t, text) -> text.replaceAll("\\d{12}(\\d{4})", "****$1");
    // the cap falls inside the card number: cut first, the mask would miss it
    PayloadPreview p = PayloadPreview.of(TICKET, utf8(payload), mask, 24);
    assertThat(p.text()).isEqualTo("xxxxxxxxxx\"card\":\"****11");
    assertThat(p.text()).doesNotContain("4111");
    assertThat(p.truncated()).isTrue();
  }

  @Test
  void aRedactorCanHideAPayloadAndAThrowingOneHidesIt() {
    assertThat(PayloadPreview.of(TICKET, utf8("secret"), PayloadRedactor.HIDE_ALL, 100).text())
        .isNull();
    PayloadRedactor broken =
        (t, text) -> {
          throw new IllegalStateException("bug");
        };
    PayloadPreview p = PayloadPreview.of(TICKET, utf8("secret"), broken, 100);
    assertThat(p.text()).isNull();
    assertThat(p.totalBytes()).isEqualTo(6);
  }

  @Test
  void binaryPayloadsAreShownAsHexWithinTheCap() {
    byte[] bin = {(byte) 0xff, 0x00, 0x10, (byte) 0xc3, 0x28, 0x01};
    PayloadPreview p = PayloadPreview.of(TICKET, bin, PayloadRedactor.NONE, 8);
    assertThat(p.binary()).isTrue();
    assertThat(p.text()).isEqualTo("ff0010c3");
    assertThat(p.truncated()).isTrue();
    PayloadPreview whole = PayloadPreview.of(TICKET, bin, PayloadRedactor.NONE, 100);
    assertThat(whole.text()).isEqualTo("ff0010c32801");
    assertThat(whole.truncated()).isFalse();
  }

  @Test
  void aZeroCapShowsNothing() {
    assertThat(PayloadPreview.of(TICKET, utf8("abc"), PayloadRedactor.NONE, 0).text()).isNull();
  }
}
