-- localmessage schema step 3 for H2 2.x: run after V1 (and after V2 of localmessage-kafka when that
-- module is used). requeued_at: when an operator last requeued the ticket; its age (maxAge) counts
-- from there.

ALTER TABLE local_message ADD COLUMN IF NOT EXISTS requeued_at TIMESTAMP(3) WITH TIME ZONE;
