-- localmessage schema for MySQL 8 / MariaDB 10.6+. Usable as a Flyway migration as it is.
-- Times are DATETIME(3) holding UTC: the library writes and compares them only with UTC_TIMESTAMP(3).
-- Binary collation: idempotency keys and biz types are case-sensitive.

CREATE TABLE IF NOT EXISTS local_message (
  id            BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  kind          SMALLINT     NOT NULL,
  biz_type      VARCHAR(64)  NOT NULL,
  idem_key      VARCHAR(128) NOT NULL,
  aggregate_id  VARCHAR(128),
  destination   VARCHAR(128),
  payload       LONGBLOB,
  headers       TEXT,
  status        SMALLINT     NOT NULL DEFAULT 0,
  attempts      INT          NOT NULL DEFAULT 0,
  max_attempts  INT          NOT NULL,
  next_retry_at DATETIME(3)  NOT NULL,
  lease_owner   VARCHAR(64),
  version       BIGINT       NOT NULL DEFAULT 0,
  last_error    VARCHAR(1024),
  created_at    DATETIME(3)  NOT NULL,
  updated_at    DATETIME(3)  NOT NULL,
  UNIQUE KEY uk_local_message_idem (biz_type, idem_key),
  KEY ix_local_message_due (biz_type, status, next_retry_at),
  KEY ix_local_message_aggregate (aggregate_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS local_message_control (
  biz_type   VARCHAR(64)  NOT NULL PRIMARY KEY,
  paused     SMALLINT     NOT NULL DEFAULT 0,
  updated_by VARCHAR(128),
  reason     VARCHAR(512),
  updated_at DATETIME(3)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS local_message_audit (
  id        BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  ticket_id BIGINT,
  biz_type  VARCHAR(64),
  action    VARCHAR(32)  NOT NULL,
  operator  VARCHAR(128) NOT NULL,
  reason    VARCHAR(512),
  at        DATETIME(3)  NOT NULL,
  KEY ix_local_message_audit_ticket (ticket_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS local_inbox (
  consumer    VARCHAR(64)  NOT NULL,
  message_id  VARCHAR(255) NOT NULL,
  received_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (consumer, message_id),
  KEY ix_local_inbox_received (received_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
