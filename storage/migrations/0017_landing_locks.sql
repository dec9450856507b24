-- Schema 17 (issue 14, several scheduler nodes): one row per target (repository and target
-- branch, engine.LandingTarget) on which a node lands now, so that landings on one target are
-- serialized across nodes. The holder renews expires_at while it lands and deletes the row
-- after; a row whose expires_at has passed (its node died) is taken over. Times are unix
-- milliseconds. A single node never writes here.

CREATE TABLE landing_locks (
  target_key TEXT PRIMARY KEY,
  node       TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
