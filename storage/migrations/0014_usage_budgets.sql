-- Schema 14: hard budgets (issue 15). usage_running is the running spend of each attempt in
-- flight, as its agent last reported it (task.usage, cumulative): one row per mission, replaced
-- on every report, gone when the attempt ends (its usage is then the mission's) or with its
-- mission. A restart therefore does not forget what an attempt spent before it. spend_daily
-- is what each profile spent per calendar day (the day is the engine's key, "2026-12-01"),
-- added to when an attempt ends: the profile's daily budget reads it.

CREATE TABLE usage_running (
  mission_id         TEXT PRIMARY KEY REFERENCES missions(id) ON DELETE CASCADE,
  attempt            INTEGER NOT NULL,
  epoch              INTEGER NOT NULL,
  voyage_id          TEXT NOT NULL DEFAULT '',
  profile            TEXT NOT NULL DEFAULT '',
  model              TEXT NOT NULL DEFAULT '',
  input_tokens       INTEGER NOT NULL DEFAULT 0,
  output_tokens      INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd           REAL NOT NULL DEFAULT 0,
  priced             INTEGER NOT NULL DEFAULT 0,
  updated_at         INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE spend_daily (
  profile            TEXT NOT NULL,
  day                TEXT NOT NULL,
  input_tokens       INTEGER NOT NULL DEFAULT 0,
  output_tokens      INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd           REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (profile, day)
) STRICT, WITHOUT ROWID;
