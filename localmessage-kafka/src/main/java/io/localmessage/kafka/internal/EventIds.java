package io.localmessage.kafka.internal;

import io.localmessage.Texts;
import io.localmessage.inbox.Inbox;
import io.localmessage.kafka.RelayHeaders;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The inbox id of a record: {@code <lm-biz-type>:<lm-event-id>} for events from the relay (an
 * idempotency key is unique only within its biz type), the bare {@code lm-event-id} when there is
 * no biz type header, else {@code topic-partition-offset}. Ids longer than the inbox column, and
 * ids whose header bytes are not storable text (invalid UTF-8, U+0000), are replaced by the SHA-256
 * of their bytes. Not API.
 */
public final class EventIds {
  private EventIds() {}

  public static String of(ConsumerRecord<byte[], byte[]> record) {
    byte[] eventId = raw(record, RelayHeaders.EVENT_ID);
    if (eventId == null || new String(eventId, StandardCharsets.UTF_8).isBlank()) {
      return record.topic() + "-" + record.partition() + "-" + record.offset();
    }
    byte[] bizType = raw(record, RelayHeaders.BIZ_TYPE);
    boolean withType = bizType != null && !new String(bizType, StandardCharsets.UTF_8).isBlank();
    String type = withType ? text(bizType) : "";
    String event = text(eventId);
    if (type == null || event == null) {
      // bytes that are not storable text (invalid UTF-8, U+0000): the id is their digest, the same
      // for every redelivery of the record, so the inbox still deduplicates it
      byte[] joined = withType ? concat(bizType, new byte[] {':'}, eventId) : eventId;
      return "sha256:" + sha256(joined);
    }
    String id = withType ? type + ":" + event : event;
    return id.length() <= Inbox.MAX_MESSAGE_ID_LENGTH ? id : "sha256:" + sha256(id);
  }

  /**
   * {@code bytes} as text when they are valid UTF-8 without U+0000, else {@code null}: such text
   * can be stored in any database as it is.
   */
  public static String text(byte[] bytes) {
    try {
      String s =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes))
              .toString();
      return Texts.unstorable(s) == null ? s : null;
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  private static byte[] raw(ConsumerRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null ? null : h.value();
  }

  private static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }

  /** The last value of header {@code name} as UTF-8, or {@code null}. */
  public static String header(ConsumerRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  /** {@value RelayHeaders#CREATED_AT} as epoch millis, or -1 when absent or malformed. */
  public static long createdAtMillis(ConsumerRecord<byte[], byte[]> record) {
    String v = header(record, RelayHeaders.CREATED_AT);
    if (v == null) {
      return -1;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static String sha256(String s) {
    return sha256(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
