package io.localmessage.kafka;

import java.sql.Connection;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Applies one Kafka record's effect through {@code connection}, inside the transaction that also
 * holds the record's inbox row and the other records of its batch. Do not commit, roll back, set a
 * savepoint or change autocommit: the consumer does.
 *
 * <p>Throwing rolls the batch's transaction back. The records before this one are then applied
 * again in a transaction of their own, so their handlers can run a second time: only what they do
 * through {@code connection} counts, and it commits once. This record is tried again on its own,
 * then parked in the dead table.
 *
 * <p>Handlers of different partitions run at the same time on different threads and connections;
 * records of one partition reach the handler one at a time, in offset order. Keep it bounded (use
 * statement timeouts): a handler that hangs holds its partition.
 */
@FunctionalInterface
public interface RecordHandler {
  void handle(ConsumerRecord<byte[], byte[]> record, Connection connection) throws Exception;
}
