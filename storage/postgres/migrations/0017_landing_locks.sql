-- Schema 17 (issue 14, several scheduler nodes), as SQLite's 0017_landing_locks.sql: one row
-- per target a node lands on now, renewed while it lands, deleted after, taken over once
-- expired.

CREATE TABLE landing_locks (
  target_key TEXT COLLATE "C" PRIMARY KEY,
  node       TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
