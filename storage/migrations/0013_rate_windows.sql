-- Schema 13 (issue 15, rate-limit windows): the usage window of each limit group (a profile's
-- limit_group, else the profile's name) as the scheduler last learned it from its agents. A
-- row is a pause (status rejected: no attempt of the group's profiles starts before until_at)
-- or a warning (allowed_warning: half concurrency until until_at); no row, the window has
-- room. Written by Engine.RecordRateLimit; read by the planner (held missions: rate_limited).

CREATE TABLE rate_windows (
  grp        TEXT PRIMARY KEY,
  status     TEXT NOT NULL CHECK (status IN ('rejected', 'allowed_warning')),
  until_at   INTEGER NOT NULL,
  resets_at  INTEGER,
  limit_type TEXT NOT NULL DEFAULT '',
  steps      INTEGER NOT NULL DEFAULT 0,
  profile    TEXT NOT NULL DEFAULT '',
  mission_id TEXT NOT NULL DEFAULT '',
  why        TEXT NOT NULL DEFAULT '',
  since      INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
