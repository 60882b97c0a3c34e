-- localmessage schema step 3 for MySQL 8 / MariaDB 10.6+: run after V1 (and after V2 of
-- localmessage-kafka when that module is used; its V2 ships in the same folder). Usable as a
-- Flyway migration as it is.
--
-- Key columns become VARBINARY: utf8mb4_bin is a PAD SPACE collation, under which 'k' and 'k '
-- are the same key (a save of one was reported as a duplicate of the other). Binary strings
-- compare byte for byte on both MySQL and MariaDB. The library still reads and writes them as
-- UTF-8 text and checks lengths in characters; the byte sizes fit the longest allowed key of
-- 4-byte characters (biz type 64, idempotency key and aggregate id 128, consumer 64, message id
-- 255 characters).
--
-- requeued_at: when an operator last requeued the ticket; its age (maxAge) counts from there.
-- The ticket table is altered last, in one statement, so its new column tells the whole step ran.

ALTER TABLE local_message_control MODIFY biz_type VARBINARY(256) NOT NULL;

ALTER TABLE local_inbox
  MODIFY consumer VARBINARY(256) NOT NULL,
  MODIFY message_id VARBINARY(1020) NOT NULL;

ALTER TABLE local_message
  MODIFY biz_type VARBINARY(256) NOT NULL,
  MODIFY idem_key VARBINARY(512) NOT NULL,
  MODIFY aggregate_id VARBINARY(512),
  ADD COLUMN requeued_at DATETIME(3) NULL;
