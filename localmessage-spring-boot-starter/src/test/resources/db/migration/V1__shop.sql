-- The quick start's own first migration: version 1 is the application's, not the library's.
CREATE TABLE purchase_order (
  id     VARCHAR(64) PRIMARY KEY,
  points INT         NOT NULL
);

CREATE TABLE points_grant (
  order_id VARCHAR(64) PRIMARY KEY,
  points   INT         NOT NULL
);
