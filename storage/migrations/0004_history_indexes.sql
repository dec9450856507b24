-- Schema 4: no read the scheduler runs every tick, and no list filter, walks the history.
-- Each statement either searches an index whose rows are live work (a partial index over
-- non-finished states) or walks an index in the listing's order and stops at its LIMIT.

-- The landing queue: completed missions whose landing can go on (one read per tick).
CREATE INDEX missions_landing_queue ON missions (id)
  WHERE state = 'completed' AND landing IN ('pending','approved','review','waiting');

-- list_missions pages in id order; each filter walks its own (column, id) index.
CREATE INDEX missions_state_id ON missions (state, id);
CREATE INDEX missions_voyage_id ON missions (voyage_id, id) WHERE voyage_id IS NOT NULL;
CREATE INDEX missions_repository_id ON missions (repository, id);
CREATE INDEX missions_persona_id ON missions (persona, id);
CREATE INDEX missions_kind_id ON missions (kind, id);
CREATE INDEX missions_landing_id ON missions (landing, id);
DROP INDEX missions_parent;
CREATE INDEX missions_parent ON missions (parent_id, id) WHERE parent_id IS NOT NULL;
DROP INDEX missions_subject;
CREATE INDEX missions_subject ON missions (subject_id, id) WHERE subject_id IS NOT NULL;
-- missions_state (state, created_at) served nothing that missions_state_id does not.
DROP INDEX missions_state;

-- Missed deadlines: only missions that can still miss one (a finished mission whose deadline
-- passed unescalated stayed in the old index for ever).
DROP INDEX missions_deadline;
CREATE INDEX missions_deadline ON missions (deadline)
  WHERE deadline IS NOT NULL AND deadline_escalated = 0 AND state NOT IN ('completed','failed','cancelled');

-- Attempt outcomes per (profile, persona), for the planner's confidence prior: counters kept
-- by triggers in the attempt's own transaction instead of a GROUP BY over every attempt.
CREATE TABLE attempt_outcomes (
  profile   TEXT NOT NULL,
  persona   TEXT NOT NULL,
  total     INTEGER NOT NULL DEFAULT 0,
  completed INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (profile, persona)
) STRICT, WITHOUT ROWID;
INSERT INTO attempt_outcomes (profile, persona, total, completed)
  SELECT profile, persona, count(*), sum(outcome = 'completed') FROM attempts WHERE profile <> '' GROUP BY profile, persona;
CREATE TRIGGER attempts_outcome_insert AFTER INSERT ON attempts WHEN NEW.profile <> '' BEGIN
  INSERT INTO attempt_outcomes (profile, persona, total, completed)
    VALUES (NEW.profile, NEW.persona, 1, NEW.outcome = 'completed')
    ON CONFLICT (profile, persona) DO UPDATE SET total = total + 1, completed = completed + excluded.completed;
END;
CREATE TRIGGER attempts_outcome_delete AFTER DELETE ON attempts WHEN OLD.profile <> '' BEGIN
  UPDATE attempt_outcomes SET total = total - 1, completed = completed - (OLD.outcome = 'completed')
   WHERE profile = OLD.profile AND persona = OLD.persona;
END;
CREATE TRIGGER attempts_outcome_update AFTER UPDATE OF profile, persona, outcome ON attempts BEGIN
  UPDATE attempt_outcomes SET total = total - 1, completed = completed - (OLD.outcome = 'completed')
   WHERE OLD.profile <> '' AND profile = OLD.profile AND persona = OLD.persona;
  INSERT INTO attempt_outcomes (profile, persona, total, completed)
    SELECT NEW.profile, NEW.persona, 1, NEW.outcome = 'completed' WHERE NEW.profile <> ''
    ON CONFLICT (profile, persona) DO UPDATE SET total = total + 1, completed = completed + excluded.completed;
END;

-- Voyages per state, kept like mission_counts; and open voyages found by state.
CREATE INDEX voyages_state ON voyages (state, id);
CREATE TABLE voyage_counts (
  state TEXT PRIMARY KEY,
  n     INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO voyage_counts (state) VALUES ('open'),('active'),('completed'),('blocked'),('cancelled');
UPDATE voyage_counts SET n = (SELECT count(*) FROM voyages WHERE voyages.state = voyage_counts.state);
CREATE TRIGGER voyages_count_insert AFTER INSERT ON voyages BEGIN
  UPDATE voyage_counts SET n = n + 1 WHERE state = NEW.state;
END;
CREATE TRIGGER voyages_count_update AFTER UPDATE OF state ON voyages WHEN OLD.state <> NEW.state BEGIN
  UPDATE voyage_counts SET n = n + (CASE state WHEN NEW.state THEN 1 ELSE -1 END)
   WHERE state IN (OLD.state, NEW.state);
END;
CREATE TRIGGER voyages_count_delete AFTER DELETE ON voyages BEGIN
  UPDATE voyage_counts SET n = n - 1 WHERE state = OLD.state;
END;


-- The leader row records whether its owner holds the host's leader lock (flock on
-- <database>-leader), so that a successor on the same host that gets the lock knows the
-- owner died and need not wait for its lease to expire.
ALTER TABLE leader ADD COLUMN host_locked INTEGER NOT NULL DEFAULT 0;
