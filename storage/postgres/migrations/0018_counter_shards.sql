-- Schema 18 (issue 14, throughput with several writers), as SQLite's 0018_counter_shards.sql:
-- each counter row is split into shards. Every mission state change used to update the same
-- mission_counts row (and every finished attempt the same attempt_outcomes row), so any two
-- concurrent writers conflicted (40001 under SERIALIZABLE) whatever missions they touched. A
-- trigger now adds its delta to the shard of its session (pg_backend_pid() % 64, distinct for
-- the connections of one pool and mostly so across nodes), creating the row when missing;
-- readers sum the shards. A shard may go below zero (a mission counted in by one session and
-- out by another): only the sums mean anything.

ALTER TABLE mission_counts ADD COLUMN shard BIGINT NOT NULL DEFAULT 0;
ALTER TABLE mission_counts DROP CONSTRAINT mission_counts_pkey;
ALTER TABLE mission_counts ADD PRIMARY KEY (state, shard);
ALTER TABLE voyage_counts ADD COLUMN shard BIGINT NOT NULL DEFAULT 0;
ALTER TABLE voyage_counts DROP CONSTRAINT voyage_counts_pkey;
ALTER TABLE voyage_counts ADD PRIMARY KEY (state, shard);
ALTER TABLE attempt_outcomes ADD COLUMN shard BIGINT NOT NULL DEFAULT 0;
ALTER TABLE attempt_outcomes DROP CONSTRAINT attempt_outcomes_pkey;
ALTER TABLE attempt_outcomes ADD PRIMARY KEY (profile, persona, shard);

-- counter_shard is the shard a session's counter deltas go to.
CREATE FUNCTION counter_shard() RETURNS BIGINT LANGUAGE sql STABLE AS $$
  SELECT (pg_backend_pid() % 64)::BIGINT
$$;

-- Static statements (no EXECUTE format), so PL/pgSQL caches their plans; an update that
-- changes the state moves one count in one statement.
CREATE FUNCTION count_mission_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO mission_counts AS c (state, shard, n) VALUES (OLD.state, counter_shard(), -1), (NEW.state, counter_shard(), 1)
      ON CONFLICT (state, shard) DO UPDATE SET n = c.n + excluded.n;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO mission_counts AS c (state, shard, n) VALUES (NEW.state, counter_shard(), 1)
      ON CONFLICT (state, shard) DO UPDATE SET n = c.n + 1;
  ELSE
    INSERT INTO mission_counts AS c (state, shard, n) VALUES (OLD.state, counter_shard(), -1)
      ON CONFLICT (state, shard) DO UPDATE SET n = c.n - 1;
  END IF;
  RETURN NULL;
END $$;
CREATE FUNCTION count_voyage_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO voyage_counts AS c (state, shard, n) VALUES (OLD.state, counter_shard(), -1), (NEW.state, counter_shard(), 1)
      ON CONFLICT (state, shard) DO UPDATE SET n = c.n + excluded.n;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO voyage_counts AS c (state, shard, n) VALUES (NEW.state, counter_shard(), 1)
      ON CONFLICT (state, shard) DO UPDATE SET n = c.n + 1;
  ELSE
    INSERT INTO voyage_counts AS c (state, shard, n) VALUES (OLD.state, counter_shard(), -1)
      ON CONFLICT (state, shard) DO UPDATE SET n = c.n - 1;
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER missions_count_insert ON missions;
DROP TRIGGER missions_count_update ON missions;
DROP TRIGGER missions_count_delete ON missions;
DROP TRIGGER voyages_count_insert ON voyages;
DROP TRIGGER voyages_count_update ON voyages;
DROP TRIGGER voyages_count_delete ON voyages;
DROP FUNCTION count_state();
CREATE TRIGGER missions_count_insert AFTER INSERT ON missions
  FOR EACH ROW EXECUTE FUNCTION count_mission_state();
CREATE TRIGGER missions_count_update AFTER UPDATE OF state ON missions
  FOR EACH ROW WHEN (OLD.state <> NEW.state) EXECUTE FUNCTION count_mission_state();
CREATE TRIGGER missions_count_delete AFTER DELETE ON missions
  FOR EACH ROW EXECUTE FUNCTION count_mission_state();
CREATE TRIGGER voyages_count_insert AFTER INSERT ON voyages
  FOR EACH ROW EXECUTE FUNCTION count_voyage_state();
CREATE TRIGGER voyages_count_update AFTER UPDATE OF state ON voyages
  FOR EACH ROW WHEN (OLD.state <> NEW.state) EXECUTE FUNCTION count_voyage_state();
CREATE TRIGGER voyages_count_delete AFTER DELETE ON voyages
  FOR EACH ROW EXECUTE FUNCTION count_voyage_state();

-- attempts_outcome keeps the same trigger names; its deltas go to the session's shard.
CREATE OR REPLACE FUNCTION attempts_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.profile <> '' THEN
    INSERT INTO attempt_outcomes AS o (profile, persona, shard, total, completed)
      VALUES (OLD.profile, OLD.persona, counter_shard(), -1, -(OLD.outcome = 'completed')::int)
      ON CONFLICT (profile, persona, shard) DO UPDATE SET total = o.total - 1, completed = o.completed + excluded.completed;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.profile <> '' THEN
    INSERT INTO attempt_outcomes AS o (profile, persona, shard, total, completed)
      VALUES (NEW.profile, NEW.persona, counter_shard(), 1, (NEW.outcome = 'completed')::int)
      ON CONFLICT (profile, persona, shard) DO UPDATE SET total = o.total + 1, completed = o.completed + excluded.completed;
  END IF;
  RETURN NULL;
END $$;
