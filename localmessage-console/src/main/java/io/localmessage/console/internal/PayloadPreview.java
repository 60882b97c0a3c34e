package io.localmessage.console.internal;

import io.localmessage.admin.MessageView;
import io.localmessage.console.PayloadRedactor;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the console shows of a payload: decoded as UTF-8 (or a hex dump when it is not text), passed
 * through the {@link PayloadRedactor}, then cut to the cap in UTF-8 bytes without splitting a
 * character.
 *
 * @param text what to show; null when hidden
 * @param binary the payload is not valid UTF-8 and is shown as hex
 * @param truncated the text was cut at the cap
 * @param totalBytes the payload's size
 */
public record PayloadPreview(String text, boolean binary, boolean truncated, int totalBytes) {
  private static final Logger log = LoggerFactory.getLogger(PayloadPreview.class);

  public static PayloadPreview of(
      MessageView ticket, byte[] payload, PayloadRedactor redactor, int capBytes) {
    if (payload == null || capBytes <= 0) {
      return new PayloadPreview(null, false, false, payload == null ? 0 : payload.length);
    }
    String decoded = utf8(payload);
    boolean binary = decoded == null;
    String text;
    if (binary) {
      // two hex digits per byte: dump only what can fit under the cap
      int n = Math.min(payload.length, capBytes / 2);
      text = HexFormat.of().formatHex(payload, 0, n);
    } else {
      text = decoded;
    }
    String shown;
    try {
      shown = redactor.redact(ticket, text);
    } catch (RuntimeException e) {
      log.warn(
          "event=payload_redactor_failed biz_type={} id={} error={}",
          ticket.bizType(),
          ticket.id(),
          e.toString());
      shown = null;
    }
    if (shown == null) {
      return new PayloadPreview(null, binary, false, payload.length);
    }
    String cut = capUtf8(shown, capBytes);
    boolean truncated = cut.length() < shown.length() || (binary && payload.length > capBytes / 2);
    return new PayloadPreview(cut, binary, truncated, payload.length);
  }

  /** The longest prefix of {@code s} whose UTF-8 encoding fits in {@code maxBytes}. */
  static String capUtf8(String s, int maxBytes) {
    int bytes = 0;
    int i = 0;
    while (i < s.length()) {
      int cp = s.codePointAt(i);
      int len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (bytes + len > maxBytes) {
        return s.substring(0, i);
      }
      bytes += len;
      i += Character.charCount(cp);
    }
    return s;
  }

  private static String utf8(byte[] payload) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(payload))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }
}
