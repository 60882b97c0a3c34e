-- localmessage schema step 3 for PostgreSQL: run after V1 (and after V2 of localmessage-kafka when
-- that module is used; its V2 ships in the same folder). Usable as a Flyway migration as it is.
-- requeued_at: when an operator last requeued the ticket; its age (maxAge) counts from there.

ALTER TABLE local_message ADD COLUMN IF NOT EXISTS requeued_at TIMESTAMPTZ(3);
