package io.localmessage.kafka.internal;

import io.localmessage.inbox.Inbox;
import io.localmessage.kafka.RelayHeaders;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The inbox id of a record: {@code <lm-biz-type>:<lm-event-id>} for events from the relay (an
 * idempotency key is unique only within its biz type), the bare {@code lm-event-id} when there is
 * no biz type header, else {@code topic-partition-offset}. Ids longer than the inbox column are
 * replaced by their SHA-256. Not API.
 */
public final class EventIds {
  private EventIds() {}

  public static String of(ConsumerRecord<byte[], byte[]> record) {
    String eventId = header(record, RelayHeaders.EVENT_ID);
    String id;
    if (eventId != null && !eventId.isBlank()) {
      String bizType = header(record, RelayHeaders.BIZ_TYPE);
      id = bizType == null || bizType.isBlank() ? eventId : bizType + ":" + eventId;
    } else {
      id = record.topic() + "-" + record.partition() + "-" + record.offset();
    }
    return id.length() <= Inbox.MAX_MESSAGE_ID_LENGTH ? id : "sha256:" + sha256(id);
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
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
