-- Schema 18 (issue 14, throughput with several writers): the counter tables get a shard
-- column. PostgreSQL spreads each counter over shards, one per writing session, so that
-- concurrent transactions do not update the same row (a serialization failure under
-- SERIALIZABLE); its readers sum the shards. SQLite has one writer at a time and keeps one
-- row per counter, in shard 0: the column is here so that both schemas have the same columns,
-- which `mcp-scheduler migrate --to postgres://…` copies by name.

ALTER TABLE mission_counts ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE voyage_counts ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempt_outcomes ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
