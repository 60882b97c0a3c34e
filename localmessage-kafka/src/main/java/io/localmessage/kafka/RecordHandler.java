package io.localmessage.kafka;

import java.sql.Connection;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Applies one Kafka record's effect through {@code connection}, inside the transaction that also
 * holds the record's inbox row. Do not commit, roll back or change autocommit: the consumer does.
 * Throwing rolls the transaction back (effect and inbox row together) and the record is tried
 * again, then parked in the dead table.
 *
 * <p>Keep it bounded (use statement timeouts): a handler that hangs holds the partition and, past
 * the consumer's {@code max.poll.interval.ms}, makes the group move it to another member.
 */
@FunctionalInterface
public interface RecordHandler {
  void handle(ConsumerRecord<byte[], byte[]> record, Connection connection) throws Exception;
}
