-- localmessage-kafka: records the inbox consumer gave up on, MySQL 8 / MariaDB 10.6+. Usable as a
-- Flyway migration after V1 (which holds local_inbox). parked_at holds UTC (UTC_TIMESTAMP(3)).

CREATE TABLE IF NOT EXISTS local_inbox_dead (
  id              BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  consumer        VARCHAR(64)   NOT NULL,
  message_id      VARCHAR(255)  NOT NULL,
  topic           VARCHAR(255)  NOT NULL,
  kafka_partition INT           NOT NULL,
  kafka_offset    BIGINT        NOT NULL,
  record_key      LONGBLOB,
  payload         LONGBLOB,
  headers         TEXT,
  attempts        INT           NOT NULL,
  last_error      VARCHAR(1024) NOT NULL,
  parked_at       DATETIME(3)   NOT NULL,
  KEY ix_local_inbox_dead_message (consumer, message_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
