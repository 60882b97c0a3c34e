-- localmessage schema step 4 for MySQL 8 / MariaDB 10.6+: run after V3. Usable as a Flyway
-- migration as it is.
--
-- One row per aggregate of an ordered biz type, locked by each transaction that saves a message
-- of that aggregate until it commits or rolls back: a second save of the same aggregate waits, so
-- its message gets a later id and the aggregate runs in the order its saves committed in. The
-- rows are only locked, never changed after they are created. Keys are binary like the ticket's.

CREATE TABLE IF NOT EXISTS local_message_lock (
  biz_type     VARBINARY(256) NOT NULL,
  aggregate_id VARBINARY(512) NOT NULL,
  created_at   DATETIME(3)    NOT NULL,
  PRIMARY KEY (biz_type, aggregate_id)
) ENGINE=InnoDB;
