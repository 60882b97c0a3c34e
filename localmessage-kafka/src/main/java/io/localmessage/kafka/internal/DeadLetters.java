package io.localmessage.kafka.internal;

import io.localmessage.MessageHeaders;
import io.localmessage.Texts;
import io.localmessage.spi.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Writes a record the consumer gave up on into the dead table. Every text is made storable first
 * (headers encoded, the error sanitized): a park that failed would hold the partition on the record
 * forever. Not API.
 */
public final class DeadLetters {
  static final int MAX_ERROR_LENGTH = 1024;
  static final int MAX_HEADER_NAME = 256;

  /**
   * The most characters of encoded headers a dead row stores: MySQL/MariaDB's {@code TEXT} column
   * holds 65,535 bytes, and a character takes at most 4 of them. Headers beyond it are left out
   * (the whole record stays at its offset), and the row says so.
   */
  public static final int MAX_HEADERS_CHARS = 16_000;

  /** The header a dead row adds when it had to leave headers out. */
  public static final String TRUNCATED = "localmessage-headers-truncated";

  // room kept for the note of what was left out
  private static final int NOTE_ROOM = 200;

  /** The prefix of a header value stored as Base64 of its bytes. */
  public static final String BASE64 = "base64:";

  private final String sql;

  public DeadLetters(Dialect dialect, String deadTable) {
    this.sql =
        "INSERT INTO "
            + deadTable
            + " (consumer, message_id, topic, kafka_partition, kafka_offset, record_key, payload,"
            + " headers, attempts, last_error, parked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            + dialect.now()
            + ")";
  }

  /** Inserts the parked {@code record} through {@code c}; the caller commits. */
  public void insert(
      Connection c,
      String consumer,
      String messageId,
      ConsumerRecord<byte[], byte[]> record,
      int attempts,
      String error)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, consumer);
      ps.setString(2, messageId);
      ps.setString(3, record.topic());
      ps.setInt(4, record.partition());
      ps.setLong(5, record.offset());
      bytes(ps, 6, record.key());
      bytes(ps, 7, record.value());
      ps.setString(8, headers(record));
      ps.setInt(9, attempts);
      ps.setString(10, truncate(error));
      ps.executeUpdate();
    }
  }

  private static void bytes(PreparedStatement ps, int index, byte[] value) throws SQLException {
    if (value == null) {
      ps.setNull(index, Types.VARBINARY);
    } else {
      ps.setBytes(index, value);
    }
  }

  /**
   * The record's headers as a JSON object of strings. A value that is not storable text (binary
   * bytes, invalid UTF-8, U+0000), or that is text starting with {@value #BASE64}, is stored as
   * {@value #BASE64} followed by the Base64 of its bytes, so the park never fails on a header and
   * the original bytes can always be recovered. A null value is the empty string. Headers that
   * would take the object past {@link #MAX_HEADERS_CHARS} are left out, in order, and a {@value
   * #TRUNCATED} entry says how many were kept: a park must never fail on the record's size.
   */
  static String headers(ConsumerRecord<byte[], byte[]> record) {
    Map<String, String> map = new LinkedHashMap<>();
    int total = 0;
    int kept = 0;
    for (Header h : record.headers()) {
      total++;
      String name = Texts.sanitize(h.key(), MAX_HEADER_NAME);
      String previous = map.put(name, value(h.value()));
      if (MessageHeaders.encode(map).length() > MAX_HEADERS_CHARS - NOTE_ROOM) {
        if (previous == null) {
          map.remove(name);
        } else {
          map.put(name, previous);
        }
      } else {
        kept++;
      }
    }
    if (kept < total) {
      map.put(
          TRUNCATED,
          "kept "
              + kept
              + " of "
              + total
              + " headers: the rest did not fit the dead table's headers column (at most "
              + MAX_HEADERS_CHARS
              + " characters); the whole record is at its topic, partition and offset");
    }
    return map.isEmpty() ? null : MessageHeaders.encode(map);
  }

  static String value(byte[] bytes) {
    if (bytes == null) {
      return "";
    }
    String text = EventIds.text(bytes);
    if (text != null && !text.startsWith(BASE64)) {
      return text;
    }
    return BASE64 + Base64.getEncoder().encodeToString(bytes);
  }

  static String truncate(String error) {
    return Texts.sanitize(error == null ? "unknown error" : error, MAX_ERROR_LENGTH);
  }
}
