-- Schema 2: why each waiting mission is held back, as the scheduler's planner last decided it
-- (design brief §5 step 3). One row per held mission, written only when the planner's reason
-- changes; since is when the current reason code began (a grace period counts from it). A row
-- goes away with its mission, and at the next planning step once the mission is not held.

CREATE TABLE holds (
  mission_id TEXT PRIMARY KEY REFERENCES missions(id) ON DELETE CASCADE,
  code       TEXT NOT NULL,
  message    TEXT NOT NULL,
  other_id   TEXT NOT NULL DEFAULT '',
  until_at   INTEGER,
  since      INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX holds_code ON holds (code);
