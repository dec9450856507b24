-- Schema 3 (issue 11, "a claim never costs a mission what its caller never got"): an attempt
-- whose lease runs out before its agent was ever heard from is abandoned, not crashed.
-- contacted: the current attempt's agent sent a heartbeat, progress or a checkpoint (reset by
-- every acquire). abandons: attempts in a row that ended abandoned (reset by any other end,
-- a retry or a resolution); they cost no retry budget and have their own limit.
ALTER TABLE missions ADD COLUMN contacted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE missions ADD COLUMN abandons INTEGER NOT NULL DEFAULT 0;
