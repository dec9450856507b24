-- PostgreSQL schema 15: the SQLite schema after its migrations 1..15 (storage/migrations),
-- consolidated into one file, since no PostgreSQL database predates it. Later schema changes
-- are new files numbered like their SQLite twins (0016_…), so that both backends report the
-- same schema version for the same tables. Column comments are in the SQLite files.
-- Types: SQLite INTEGER is BIGINT (times are unix milliseconds, flags are 0/1 so that both
-- backends scan the same Go types), REAL is DOUBLE PRECISION, lists and records are JSON text.
-- Ids (id, *_id, depends_on) and write-area prefixes are COLLATE "C": they compare and sort
-- bytewise, as SQLite's do, whatever the database's default collation (listings and cursors
-- go in id order).

CREATE TABLE voyages (
  id                   TEXT COLLATE "C" PRIMARY KEY,
  idempotency_key      TEXT UNIQUE,
  title                TEXT NOT NULL,
  goal                 TEXT NOT NULL DEFAULT '',
  repository           TEXT NOT NULL,
  target_branch        TEXT NOT NULL DEFAULT '',
  state                TEXT NOT NULL CHECK (state IN ('open','active','completed','blocked','cancelled')),
  cost_limit_usd       DOUBLE PRECISION NOT NULL DEFAULT 0,
  input_tokens         BIGINT NOT NULL DEFAULT 0,
  output_tokens        BIGINT NOT NULL DEFAULT 0,
  cost_usd             DOUBLE PRECISION NOT NULL DEFAULT 0,
  requirements_changed BIGINT NOT NULL DEFAULT 0,
  escalation_id        TEXT COLLATE "C",
  created_at           BIGINT NOT NULL,
  updated_at           BIGINT NOT NULL,
  settled_at           BIGINT,
  token_limit          BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX voyages_state ON voyages (state, id);

CREATE TABLE missions (
  id              TEXT COLLATE "C" PRIMARY KEY,
  voyage_id       TEXT COLLATE "C" REFERENCES voyages(id) ON DELETE SET NULL,
  parent_id       TEXT COLLATE "C",
  idempotency_key TEXT UNIQUE,
  client_key      TEXT NOT NULL DEFAULT '',
  title           TEXT NOT NULL,
  brief           TEXT NOT NULL,
  repository      TEXT NOT NULL,
  target_branch   TEXT NOT NULL DEFAULT '',
  priority        BIGINT NOT NULL DEFAULT 100,
  kind            TEXT NOT NULL DEFAULT 'work',
  subject_id      TEXT COLLATE "C",
  persona         TEXT NOT NULL DEFAULT '',
  capabilities    TEXT NOT NULL DEFAULT '[]',
  write_area      TEXT,
  model_policy    TEXT NOT NULL DEFAULT '{}',
  workspace       TEXT NOT NULL DEFAULT 'worktree',
  review          TEXT NOT NULL DEFAULT 'none',
  acceptance      TEXT NOT NULL DEFAULT '[]',
  deadline        BIGINT,
  retry_budget    BIGINT NOT NULL DEFAULT 3,
  cost_limit_usd  DOUBLE PRECISION NOT NULL DEFAULT 0,
  state           TEXT NOT NULL CHECK (state IN ('pending','leased','running','interrupted','completed','failed','blocked','cancelled')),
  attempt         BIGINT NOT NULL DEFAULT 0,
  attempts_used   BIGINT NOT NULL DEFAULT 0,
  epoch           BIGINT NOT NULL DEFAULT 0,
  lease_owner     TEXT,
  lease_expires_at BIGINT,
  profile         TEXT NOT NULL DEFAULT '',
  not_before      BIGINT NOT NULL DEFAULT 0,
  wait_reason     TEXT NOT NULL DEFAULT '',
  preempt         BIGINT NOT NULL DEFAULT 0,
  serial          BIGINT NOT NULL DEFAULT 0,
  checkpoint      TEXT,
  progress        TEXT,
  result          TEXT,
  last_failure    TEXT,
  last_signature  TEXT NOT NULL DEFAULT '',
  decision        TEXT,
  landing         TEXT NOT NULL DEFAULT 'none',
  skipped         BIGINT NOT NULL DEFAULT 0,
  voyage_active   BIGINT NOT NULL DEFAULT 0,
  input_tokens    BIGINT NOT NULL DEFAULT 0,
  output_tokens   BIGINT NOT NULL DEFAULT 0,
  cost_usd        DOUBLE PRECISION NOT NULL DEFAULT 0,
  escalation_id   TEXT COLLATE "C",
  deadline_escalated BIGINT NOT NULL DEFAULT 0,
  run             TEXT,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL,
  started_at      BIGINT,
  finished_at     BIGINT,
  contacted       BIGINT NOT NULL DEFAULT 0,
  abandons        BIGINT NOT NULL DEFAULT 0,
  token_limit     BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX missions_pick ON missions (priority, (voyage_active > 0) DESC, (state = 'interrupted') DESC, created_at, id)
  WHERE state IN ('pending','interrupted');
CREATE INDEX missions_live ON missions (repository, lease_expires_at) WHERE state IN ('leased','running');
CREATE INDEX missions_voyage ON missions (voyage_id, created_at);
CREATE INDEX missions_landing_queue ON missions (id)
  WHERE state = 'completed' AND landing IN ('pending','approved','review','waiting');
CREATE INDEX missions_landing_awaiting ON missions (id)
  WHERE state = 'completed' AND landing IN ('approval','repair');
CREATE INDEX missions_state_id ON missions (state, id);
CREATE INDEX missions_voyage_id ON missions (voyage_id, id) WHERE voyage_id IS NOT NULL;
CREATE INDEX missions_repository_id ON missions (repository, id);
CREATE INDEX missions_persona_id ON missions (persona, id);
CREATE INDEX missions_kind_id ON missions (kind, id);
CREATE INDEX missions_landing_id ON missions (landing, id);
CREATE INDEX missions_parent ON missions (parent_id, id) WHERE parent_id IS NOT NULL;
CREATE INDEX missions_subject ON missions (subject_id, id) WHERE subject_id IS NOT NULL;
CREATE INDEX missions_deadline ON missions (deadline)
  WHERE deadline IS NOT NULL AND deadline_escalated = 0 AND state NOT IN ('completed','failed','cancelled');
CREATE INDEX missions_state ON missions (state, created_at) WHERE state IN ('completed','failed','cancelled');

-- Per-state counters kept by triggers, as in SQLite (mission_counts, voyage_counts).
CREATE TABLE mission_counts (
  state TEXT PRIMARY KEY,
  n     BIGINT NOT NULL DEFAULT 0
);
INSERT INTO mission_counts (state) VALUES
  ('pending'),('leased'),('running'),('interrupted'),('completed'),('failed'),('blocked'),('cancelled');

CREATE TABLE voyage_counts (
  state TEXT PRIMARY KEY,
  n     BIGINT NOT NULL DEFAULT 0
);
INSERT INTO voyage_counts (state) VALUES ('open'),('active'),('completed'),('blocked'),('cancelled');

-- count_state keeps <TG_ARGV[0]> (mission_counts or voyage_counts) in step with the state
-- column of the triggering table.
CREATE FUNCTION count_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    EXECUTE format('UPDATE %I SET n = n - 1 WHERE state = $1', TG_ARGV[0]) USING OLD.state;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    EXECUTE format('UPDATE %I SET n = n + 1 WHERE state = $1', TG_ARGV[0]) USING NEW.state;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER missions_count_insert AFTER INSERT ON missions
  FOR EACH ROW EXECUTE FUNCTION count_state('mission_counts');
CREATE TRIGGER missions_count_update AFTER UPDATE OF state ON missions
  FOR EACH ROW WHEN (OLD.state <> NEW.state) EXECUTE FUNCTION count_state('mission_counts');
CREATE TRIGGER missions_count_delete AFTER DELETE ON missions
  FOR EACH ROW EXECUTE FUNCTION count_state('mission_counts');
CREATE TRIGGER voyages_count_insert AFTER INSERT ON voyages
  FOR EACH ROW EXECUTE FUNCTION count_state('voyage_counts');
CREATE TRIGGER voyages_count_update AFTER UPDATE OF state ON voyages
  FOR EACH ROW WHEN (OLD.state <> NEW.state) EXECUTE FUNCTION count_state('voyage_counts');
CREATE TRIGGER voyages_count_delete AFTER DELETE ON voyages
  FOR EACH ROW EXECUTE FUNCTION count_state('voyage_counts');

-- missions.voyage_active is the voyage's stage as the pick needs it (SQLite schema 11):
-- 2 active or blocked, 1 open, 0 no voyage or a finished one; kept by the database only.
CREATE FUNCTION voyage_stage(state TEXT) RETURNS BIGINT LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE state WHEN 'active' THEN 2 WHEN 'blocked' THEN 2 WHEN 'open' THEN 1 ELSE 0 END::BIGINT
$$;
CREATE FUNCTION missions_voyage_active() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.voyage_active := coalesce((SELECT voyage_stage(v.state) FROM voyages AS v WHERE v.id = NEW.voyage_id), 0);
  RETURN NEW;
END $$;
-- BEFORE INSERT sets the row's own column (SQLite updates it after the insert: same result).
CREATE TRIGGER missions_voyage_active_insert BEFORE INSERT ON missions
  FOR EACH ROW WHEN (NEW.voyage_id IS NOT NULL) EXECUTE FUNCTION missions_voyage_active();
CREATE FUNCTION voyages_active_copy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE missions SET voyage_active = voyage_stage(NEW.state)
   WHERE voyage_id = NEW.id AND voyage_active <> voyage_stage(NEW.state);
  RETURN NULL;
END $$;
CREATE TRIGGER voyages_active_copy AFTER UPDATE OF state ON voyages
  FOR EACH ROW WHEN (OLD.state <> NEW.state) EXECUTE FUNCTION voyages_active_copy();

CREATE TABLE dependencies (
  mission_id TEXT COLLATE "C" NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
  depends_on TEXT COLLATE "C" NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
  type       TEXT NOT NULL CHECK (type IN ('hard','soft','conflict','serialization')),
  reason     TEXT NOT NULL DEFAULT '',
  source     TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (mission_id, depends_on, type)
);
CREATE INDEX dependencies_reverse ON dependencies (depends_on, type);

-- prefix compares bytes (COLLATE "C", SQLite's BINARY) whatever the database's collation:
-- WriteAreaOverlaps finds the prefixes starting with p as the index range [p, p || U+10FFFF).
CREATE TABLE write_areas (
  mission_id TEXT COLLATE "C" NOT NULL REFERENCES missions(id) ON DELETE CASCADE,
  repository TEXT NOT NULL,
  prefix     TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (repository, prefix, mission_id)
);
CREATE INDEX write_areas_mission ON write_areas (mission_id);

CREATE TABLE attempts (
  mission_id TEXT COLLATE "C" NOT NULL,
  attempt    BIGINT NOT NULL,
  epoch      BIGINT NOT NULL,
  agent      TEXT NOT NULL DEFAULT '',
  profile    TEXT NOT NULL DEFAULT '',
  persona    TEXT NOT NULL DEFAULT '',
  outcome    TEXT NOT NULL,
  failure    TEXT,
  signature  TEXT NOT NULL DEFAULT '',
  weight     BIGINT NOT NULL DEFAULT 0,
  input_tokens  BIGINT NOT NULL DEFAULT 0,
  output_tokens BIGINT NOT NULL DEFAULT 0,
  cost_usd   DOUBLE PRECISION NOT NULL DEFAULT 0,
  summary    TEXT NOT NULL DEFAULT '',
  started_at BIGINT,
  ended_at   BIGINT NOT NULL,
  PRIMARY KEY (mission_id, attempt, epoch)
);
CREATE INDEX attempts_profile ON attempts (profile, persona, outcome);

-- Attempt outcomes per (profile, persona), kept by a trigger (SQLite schema 4).
CREATE TABLE attempt_outcomes (
  profile   TEXT NOT NULL,
  persona   TEXT NOT NULL,
  total     BIGINT NOT NULL DEFAULT 0,
  completed BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (profile, persona)
);
CREATE FUNCTION attempts_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.profile <> '' THEN
    UPDATE attempt_outcomes SET total = total - 1, completed = completed - (OLD.outcome = 'completed')::int
     WHERE profile = OLD.profile AND persona = OLD.persona;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.profile <> '' THEN
    INSERT INTO attempt_outcomes AS o (profile, persona, total, completed)
      VALUES (NEW.profile, NEW.persona, 1, (NEW.outcome = 'completed')::int)
      ON CONFLICT (profile, persona) DO UPDATE SET total = o.total + 1, completed = o.completed + excluded.completed;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER attempts_outcome_insert AFTER INSERT ON attempts
  FOR EACH ROW EXECUTE FUNCTION attempts_outcome();
CREATE TRIGGER attempts_outcome_delete AFTER DELETE ON attempts
  FOR EACH ROW EXECUTE FUNCTION attempts_outcome();
CREATE TRIGGER attempts_outcome_update AFTER UPDATE OF profile, persona, outcome ON attempts
  FOR EACH ROW EXECUTE FUNCTION attempts_outcome();

CREATE TABLE workspaces (
  mission_id    TEXT COLLATE "C" NOT NULL,
  attempt       BIGINT NOT NULL,
  path          TEXT NOT NULL,
  branch        TEXT NOT NULL DEFAULT '',
  base_commit   TEXT NOT NULL DEFAULT '',
  strategy      TEXT NOT NULL,
  state         TEXT NOT NULL DEFAULT 'active',
  created_at    BIGINT NOT NULL,
  removed_at    BIGINT,
  read_only     BIGINT NOT NULL DEFAULT 0,
  resumed       BIGINT NOT NULL DEFAULT 0,
  repo_id       TEXT COLLATE "C" NOT NULL DEFAULT '',
  target_branch TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (mission_id, attempt)
);

CREATE TABLE landings (
  mission_id    TEXT COLLATE "C" NOT NULL,
  attempt       BIGINT NOT NULL,
  status        TEXT NOT NULL,
  target_branch TEXT NOT NULL DEFAULT '',
  commit_id     TEXT COLLATE "C" NOT NULL DEFAULT '',
  old_target    TEXT NOT NULL DEFAULT '',
  new_target    TEXT NOT NULL DEFAULT '',
  changed       TEXT NOT NULL DEFAULT '[]',
  outside       TEXT NOT NULL DEFAULT '[]',
  conflicts     TEXT NOT NULL DEFAULT '[]',
  detail        TEXT NOT NULL DEFAULT '',
  duration_ms   BIGINT NOT NULL DEFAULT 0,
  at            BIGINT NOT NULL,
  PRIMARY KEY (mission_id, attempt)
);

CREATE TABLE waves (
  id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  at         BIGINT NOT NULL,
  runnable   BIGINT NOT NULL,
  dispatched TEXT NOT NULL DEFAULT '[]',
  held       TEXT NOT NULL DEFAULT '[]'
);

CREATE TABLE escalations (
  id                TEXT COLLATE "C" PRIMARY KEY,
  mission_ids       TEXT NOT NULL DEFAULT '[]',
  voyage_id         TEXT COLLATE "C",
  route             TEXT NOT NULL CHECK (route IN ('main_agent','architect','person','debugger')),
  kind              TEXT NOT NULL,
  cause_id          TEXT COLLATE "C",
  reason            TEXT NOT NULL,
  decision_required TEXT NOT NULL,
  evidence          TEXT NOT NULL DEFAULT '[]',
  safe_next_step    TEXT NOT NULL DEFAULT '',
  state             TEXT NOT NULL CHECK (state IN ('open','resolved')),
  resolution        TEXT NOT NULL DEFAULT '',
  resolved_by       TEXT NOT NULL DEFAULT '',
  created_at        BIGINT NOT NULL,
  resolved_at       BIGINT,
  once_key          TEXT
);
CREATE INDEX escalations_state ON escalations (state, created_at);
CREATE INDEX escalations_voyage ON escalations (voyage_id) WHERE voyage_id IS NOT NULL;
CREATE INDEX escalations_cause ON escalations (cause_id) WHERE cause_id IS NOT NULL;
CREATE UNIQUE INDEX escalations_once ON escalations (once_key) WHERE once_key IS NOT NULL AND state = 'open';

CREATE TABLE agents (
  id           TEXT COLLATE "C" PRIMARY KEY,
  kind         TEXT NOT NULL,
  profile      TEXT NOT NULL DEFAULT '',
  capabilities TEXT NOT NULL DEFAULT '[]',
  personas     TEXT NOT NULL DEFAULT '[]',
  last_seen    BIGINT NOT NULL,
  running      BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX agents_last_seen ON agents (last_seen);

CREATE TABLE events (
  seq        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  at         BIGINT NOT NULL,
  type       TEXT NOT NULL,
  mission_id TEXT COLLATE "C",
  voyage_id  TEXT COLLATE "C",
  epoch      BIGINT NOT NULL DEFAULT 0,
  attempt    BIGINT NOT NULL DEFAULT 0,
  actor      TEXT NOT NULL DEFAULT '',
  data       TEXT
);
CREATE INDEX events_mission ON events (mission_id, seq) WHERE mission_id IS NOT NULL;
CREATE INDEX events_voyage ON events (voyage_id, seq) WHERE voyage_id IS NOT NULL;
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only';
END $$;
CREATE TRIGGER events_append_only BEFORE UPDATE ON events
  FOR EACH ROW EXECUTE FUNCTION events_append_only();

CREATE TABLE scheduler (
  id     BIGINT PRIMARY KEY CHECK (id = 1),
  paused BIGINT NOT NULL DEFAULT 0
);
INSERT INTO scheduler (id) VALUES (1);

CREATE TABLE leader (
  id          BIGINT PRIMARY KEY CHECK (id = 1),
  owner       TEXT NOT NULL DEFAULT '',
  epoch       BIGINT NOT NULL DEFAULT 0,
  expires_at  BIGINT NOT NULL DEFAULT 0,
  phase       TEXT NOT NULL DEFAULT '',
  host_locked BIGINT NOT NULL DEFAULT 0
);
INSERT INTO leader (id) VALUES (1);

CREATE TABLE holds (
  mission_id TEXT COLLATE "C" PRIMARY KEY REFERENCES missions(id) ON DELETE CASCADE,
  code       TEXT NOT NULL,
  message    TEXT NOT NULL,
  other_id   TEXT COLLATE "C" NOT NULL DEFAULT '',
  until_at   BIGINT,
  since      BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX holds_code ON holds (code);

CREATE TABLE notice_cursor (
  id  BIGINT PRIMARY KEY CHECK (id = 1),
  seq BIGINT NOT NULL
);
INSERT INTO notice_cursor (id, seq) VALUES (1, 0);

CREATE TABLE notices (
  id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  sink       TEXT NOT NULL,
  event_seq  BIGINT NOT NULL,
  type       TEXT NOT NULL,
  body       TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  attempts   BIGINT NOT NULL DEFAULT 0,
  next_at    BIGINT NOT NULL,
  last_error TEXT NOT NULL DEFAULT '',
  gave_up_at BIGINT
);
CREATE INDEX notices_due ON notices (next_at, id) WHERE gave_up_at IS NULL;
CREATE INDEX notices_gave_up ON notices (gave_up_at, id) WHERE gave_up_at IS NOT NULL;

CREATE TABLE rate_windows (
  grp        TEXT PRIMARY KEY,
  status     TEXT NOT NULL CHECK (status IN ('rejected', 'allowed_warning')),
  until_at   BIGINT NOT NULL,
  resets_at  BIGINT,
  limit_type TEXT NOT NULL DEFAULT '',
  steps      BIGINT NOT NULL DEFAULT 0,
  profile    TEXT NOT NULL DEFAULT '',
  mission_id TEXT COLLATE "C" NOT NULL DEFAULT '',
  why        TEXT NOT NULL DEFAULT '',
  since      BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE usage_running (
  mission_id         TEXT COLLATE "C" PRIMARY KEY REFERENCES missions(id) ON DELETE CASCADE,
  attempt            BIGINT NOT NULL,
  epoch              BIGINT NOT NULL,
  voyage_id          TEXT COLLATE "C" NOT NULL DEFAULT '',
  profile            TEXT NOT NULL DEFAULT '',
  model              TEXT NOT NULL DEFAULT '',
  input_tokens       BIGINT NOT NULL DEFAULT 0,
  output_tokens      BIGINT NOT NULL DEFAULT 0,
  cache_read_tokens  BIGINT NOT NULL DEFAULT 0,
  cache_write_tokens BIGINT NOT NULL DEFAULT 0,
  cost_usd           DOUBLE PRECISION NOT NULL DEFAULT 0,
  priced             BIGINT NOT NULL DEFAULT 0,
  updated_at         BIGINT NOT NULL
);

CREATE TABLE spend_daily (
  profile            TEXT NOT NULL,
  day                TEXT NOT NULL,
  input_tokens       BIGINT NOT NULL DEFAULT 0,
  output_tokens      BIGINT NOT NULL DEFAULT 0,
  cache_read_tokens  BIGINT NOT NULL DEFAULT 0,
  cache_write_tokens BIGINT NOT NULL DEFAULT 0,
  cost_usd           DOUBLE PRECISION NOT NULL DEFAULT 0,
  PRIMARY KEY (profile, day)
);
