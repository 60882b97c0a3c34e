package io.localmessage.kafka.internal;

import io.localmessage.internal.HeadersCodec;
import io.localmessage.spi.Dialect;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** Writes a record the consumer gave up on into the dead table. Not API. */
public final class DeadLetters {
  static final int MAX_ERROR_LENGTH = 1024;

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

  static String headers(ConsumerRecord<byte[], byte[]> record) {
    Map<String, String> map = new LinkedHashMap<>();
    for (Header h : record.headers()) {
      map.put(h.key(), h.value() == null ? "" : new String(h.value(), StandardCharsets.UTF_8));
    }
    return map.isEmpty() ? null : HeadersCodec.encode(map);
  }

  static String truncate(String error) {
    String e = error == null ? "unknown error" : error;
    return e.length() <= MAX_ERROR_LENGTH ? e : e.substring(0, MAX_ERROR_LENGTH - 3) + "...";
  }
}
