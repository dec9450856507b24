-- Schema 1: missions, voyages, dependencies, write areas, attempts, workspaces, landings,
-- waves, escalations, agents, the append-only events log, per-state counters, the scheduler
-- flags and the leader lease. Times are INTEGER unix milliseconds; lists are JSON arrays.

CREATE TABLE voyages (
  id                   TEXT PRIMARY KEY,
  idempotency_key      TEXT UNIQUE,
  title                TEXT NOT NULL,
  goal                 TEXT NOT NULL DEFAULT '',
  repository           TEXT NOT NULL,
  target_branch        TEXT NOT NULL DEFAULT '',
  state                TEXT NOT NULL CHECK (state IN ('open','active','completed','blocked','cancelled')),
  cost_limit_usd       REAL NOT NULL DEFAULT 0,
  input_tokens         INTEGER NOT NULL DEFAULT 0,
  output_tokens        INTEGER NOT NULL DEFAULT 0,
  cost_usd             REAL NOT NULL DEFAULT 0,
  requirements_changed INTEGER NOT NULL DEFAULT 0,
  escalation_id        TEXT,
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL,
  settled_at           INTEGER
) STRICT;

CREATE TABLE missions (
  id              TEXT PRIMARY KEY,
  voyage_id       TEXT REFERENCES voyages(id) ON DELETE SET NULL,
  parent_id       TEXT,
  idempotency_key TEXT UNIQUE,
  client_key      TEXT NOT NULL DEFAULT '',
  title           TEXT NOT NULL,
  brief           TEXT NOT NULL,
  repository      TEXT NOT NULL,
  target_branch   TEXT NOT NULL DEFAULT '',
  priority        INTEGER NOT NULL DEFAULT 100,
  kind            TEXT NOT NULL DEFAULT 'work',
  subject_id      TEXT,
  persona         TEXT NOT NULL DEFAULT '',
  capabilities    TEXT NOT NULL DEFAULT '[]',
  write_area      TEXT,                       -- JSON array; NULL: exclusive in its repository
  model_policy    TEXT NOT NULL DEFAULT '{}',
  workspace       TEXT NOT NULL DEFAULT 'worktree',
  review          TEXT NOT NULL DEFAULT 'none',
  acceptance      TEXT NOT NULL DEFAULT '[]',
  deadline        INTEGER,
  retry_budget    INTEGER NOT NULL DEFAULT 3,
  cost_limit_usd  REAL NOT NULL DEFAULT 0,

  state           TEXT NOT NULL CHECK (state IN ('pending','leased','running','interrupted','completed','failed','blocked','cancelled')),
  attempt         INTEGER NOT NULL DEFAULT 0,
  attempts_used   INTEGER NOT NULL DEFAULT 0,
  epoch           INTEGER NOT NULL DEFAULT 0,
  lease_owner     TEXT,
  lease_expires_at INTEGER,
  profile         TEXT NOT NULL DEFAULT '',
  not_before      INTEGER NOT NULL DEFAULT 0,
  wait_reason     TEXT NOT NULL DEFAULT '',
  preempt         INTEGER NOT NULL DEFAULT 0,
  serial          INTEGER NOT NULL DEFAULT 0,
  checkpoint      TEXT,
  progress        TEXT,
  result          TEXT,
  last_failure    TEXT,
  last_signature  TEXT NOT NULL DEFAULT '',
  decision        TEXT,
  landing         TEXT NOT NULL DEFAULT 'none',
  skipped         INTEGER NOT NULL DEFAULT 0,
  voyage_active   INTEGER NOT NULL DEFAULT 0,
  input_tokens    INTEGER NOT NULL DEFAULT 0,
  output_tokens   INTEGER NOT NULL DEFAULT 0,
  cost_usd        REAL NOT NULL DEFAULT 0,
  escalation_id   TEXT,
  deadline_escalated INTEGER NOT NULL DEFAULT 0,
  run             TEXT,

  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  started_at      INTEGER,
  finished_at     INTEGER
) STRICT;

-- Pick order of design brief §3, over runnable states only: the acquire statement walks this
-- index in order and stops at the first mission whose other conditions hold.
CREATE INDEX missions_pick ON missions (priority, voyage_active DESC, (state = 'interrupted') DESC, created_at, id)
  WHERE state IN ('pending','interrupted');
CREATE INDEX missions_live ON missions (repository, lease_expires_at) WHERE state IN ('leased','running');
CREATE INDEX missions_voyage ON missions (voyage_id, created_at);
CREATE INDEX missions_state ON missions (state, created_at);
CREATE INDEX missions_parent ON missions (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX missions_subject ON missions (subject_id) WHERE subject_id IS NOT NULL;
CREATE INDEX missions_deadline ON missions (deadline) WHERE deadline IS NOT NULL AND deadline_escalated = 0;

CREATE TABLE mission_counts (
  state TEXT PRIMARY KEY,
  n     INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO mission_counts (state) VALUES
  ('pending'),('leased'),('running'),('interrupted'),('completed'),('failed'),('blocked'),('cancelled');

CREATE TRIGGER missions_count_insert AFTER INSERT ON missions BEGIN
  UPDATE mission_counts SET n = n + 1 WHERE state = NEW.state;
END;
CREATE TRIGGER missions_count_update AFTER UPDATE OF state ON missions WHEN OLD.state <> NEW.state BEGIN
  UPDATE mission_counts SET n = n + (CASE state WHEN NEW.state THEN 1 ELSE -1 END)
   WHERE state IN (OLD.state, NEW.state);
END;
CREATE TRIGGER missions_count_delete AFTER DELETE ON missions BEGIN
  UPDATE mission_counts SET n = n - 1 WHERE state = OLD.state;
END;

CREATE TABLE dependencies (
  mission_id TEXT NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
  depends_on TEXT NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
  type       TEXT NOT NULL CHECK (type IN ('hard','soft','conflict','serialization')),
  reason     TEXT NOT NULL DEFAULT '',
  source     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (mission_id, depends_on, type)
) STRICT, WITHOUT ROWID;
CREATE INDEX dependencies_reverse ON dependencies (depends_on, type);

-- Literal prefixes of write-area patterns of non-terminal missions (for overlap checks).
CREATE TABLE write_areas (
  mission_id TEXT NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
  repository TEXT NOT NULL,
  prefix     TEXT NOT NULL,
  PRIMARY KEY (repository, prefix, mission_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX write_areas_mission ON write_areas (mission_id);

CREATE TABLE attempts (
  mission_id TEXT NOT NULL,
  attempt    INTEGER NOT NULL,
  epoch      INTEGER NOT NULL,
  agent      TEXT NOT NULL DEFAULT '',
  profile    TEXT NOT NULL DEFAULT '',
  persona    TEXT NOT NULL DEFAULT '',
  outcome    TEXT NOT NULL,
  failure    TEXT,
  signature  TEXT NOT NULL DEFAULT '',
  weight     INTEGER NOT NULL DEFAULT 0,
  input_tokens  INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd   REAL NOT NULL DEFAULT 0,
  summary    TEXT NOT NULL DEFAULT '',
  started_at INTEGER,
  ended_at   INTEGER NOT NULL,
  PRIMARY KEY (mission_id, attempt, epoch)
) STRICT;
CREATE INDEX attempts_profile ON attempts (profile, persona, outcome);

CREATE TABLE workspaces (
  mission_id  TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  path        TEXT NOT NULL,
  branch      TEXT NOT NULL DEFAULT '',
  base_commit TEXT NOT NULL DEFAULT '',
  strategy    TEXT NOT NULL,
  state       TEXT NOT NULL DEFAULT 'active',
  created_at  INTEGER NOT NULL,
  removed_at  INTEGER,
  PRIMARY KEY (mission_id, attempt)
) STRICT;

CREATE TABLE landings (
  mission_id    TEXT NOT NULL,
  attempt       INTEGER NOT NULL,
  status        TEXT NOT NULL,
  target_branch TEXT NOT NULL DEFAULT '',
  commit_id     TEXT NOT NULL DEFAULT '',
  old_target    TEXT NOT NULL DEFAULT '',
  new_target    TEXT NOT NULL DEFAULT '',
  changed       TEXT NOT NULL DEFAULT '[]',
  outside       TEXT NOT NULL DEFAULT '[]',
  conflicts     TEXT NOT NULL DEFAULT '[]',
  detail        TEXT NOT NULL DEFAULT '',
  duration_ms   INTEGER NOT NULL DEFAULT 0,
  at            INTEGER NOT NULL,
  PRIMARY KEY (mission_id, attempt)
) STRICT;

CREATE TABLE waves (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  runnable   INTEGER NOT NULL,
  dispatched TEXT NOT NULL DEFAULT '[]',
  held       TEXT NOT NULL DEFAULT '[]'
) STRICT;

CREATE TABLE escalations (
  id                TEXT PRIMARY KEY,
  mission_ids       TEXT NOT NULL DEFAULT '[]',
  voyage_id         TEXT,
  route             TEXT NOT NULL CHECK (route IN ('main_agent','architect','person','debugger')),
  kind              TEXT NOT NULL,
  cause_id          TEXT,
  reason            TEXT NOT NULL,
  decision_required TEXT NOT NULL,
  evidence          TEXT NOT NULL DEFAULT '[]',
  safe_next_step    TEXT NOT NULL DEFAULT '',
  state             TEXT NOT NULL CHECK (state IN ('open','resolved')),
  resolution        TEXT NOT NULL DEFAULT '',
  resolved_by       TEXT NOT NULL DEFAULT '',
  created_at        INTEGER NOT NULL,
  resolved_at       INTEGER
) STRICT;
CREATE INDEX escalations_state ON escalations (state, created_at);
CREATE INDEX escalations_voyage ON escalations (voyage_id) WHERE voyage_id IS NOT NULL;
CREATE INDEX escalations_cause ON escalations (cause_id) WHERE cause_id IS NOT NULL;

CREATE TABLE agents (
  id           TEXT PRIMARY KEY,
  kind         TEXT NOT NULL,
  profile      TEXT NOT NULL DEFAULT '',
  capabilities TEXT NOT NULL DEFAULT '[]',
  personas     TEXT NOT NULL DEFAULT '[]',
  last_seen    INTEGER NOT NULL,
  running      INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  type       TEXT NOT NULL,
  mission_id TEXT,
  voyage_id  TEXT,
  epoch      INTEGER NOT NULL DEFAULT 0,
  attempt    INTEGER NOT NULL DEFAULT 0,
  actor      TEXT NOT NULL DEFAULT '',
  data       TEXT
) STRICT;
CREATE INDEX events_mission ON events (mission_id, seq) WHERE mission_id IS NOT NULL;
CREATE INDEX events_voyage ON events (voyage_id, seq) WHERE voyage_id IS NOT NULL;
CREATE TRIGGER events_append_only BEFORE UPDATE ON events BEGIN
  SELECT RAISE(ABORT, 'events are append-only');
END;

CREATE TABLE scheduler (
  id     INTEGER PRIMARY KEY CHECK (id = 1),
  paused INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO scheduler (id) VALUES (1);

CREATE TABLE leader (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  owner      TEXT NOT NULL DEFAULT '',
  epoch      INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER NOT NULL DEFAULT 0,
  phase      TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO leader (id) VALUES (1);
