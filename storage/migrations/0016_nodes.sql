-- Schema 16 (issue 14, several scheduler nodes): the node that took a mission's latest lease
-- ('' on a single node), and one lease row per node (cluster mode: the process running the
-- node renews it; its epoch rises on every change of owner). Times are unix milliseconds.

ALTER TABLE missions ADD COLUMN node TEXT NOT NULL DEFAULT '';

CREATE TABLE nodes (
  name       TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  epoch      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  since      INTEGER NOT NULL,
  phase      TEXT NOT NULL DEFAULT ''
);
