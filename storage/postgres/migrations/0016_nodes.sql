-- Schema 16 (issue 14, several scheduler nodes), as SQLite's 0016_nodes.sql: the node that
-- took a mission's latest lease ('' on a single node), and one lease row per node.

ALTER TABLE missions ADD COLUMN node TEXT NOT NULL DEFAULT '';

CREATE TABLE nodes (
  name       TEXT COLLATE "C" PRIMARY KEY,
  owner      TEXT NOT NULL,
  epoch      BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  since      BIGINT NOT NULL,
  phase      TEXT NOT NULL DEFAULT ''
);
