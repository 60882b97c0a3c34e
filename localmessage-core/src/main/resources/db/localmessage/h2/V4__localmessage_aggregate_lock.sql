-- localmessage schema step 4 for H2 2.x: run after V3. One row per aggregate of an ordered biz
-- type, locked by each transaction that saves a message of that aggregate until it commits or
-- rolls back, so the aggregate runs in the order its saves committed in.

CREATE TABLE IF NOT EXISTS local_message_lock (
  biz_type     VARCHAR(64)  NOT NULL,
  aggregate_id VARCHAR(128) NOT NULL,
  created_at   TIMESTAMP(3) WITH TIME ZONE NOT NULL,
  PRIMARY KEY (biz_type, aggregate_id)
);
