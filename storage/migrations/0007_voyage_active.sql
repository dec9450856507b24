-- Schema 7 (issue 13 item 6): a voyage's state is stored once, in voyages.state. The pick
-- order's tiebreak "missions of a voyage in progress (active or blocked) first" needs it on
-- the mission row, because the pick walks one index (missions_pick) in pick order and stops
-- at the first runnable mission, and SQLite cannot index across tables. So missions.
-- voyage_active is a copy the database keeps, never written by the engine: set when a
-- mission is inserted, and rewritten for every mission of a voyage in the same statement
-- that moves the voyage into or out of active/blocked. Before, the engine copied the flag
-- once, on the voyage's first start, and a voyage blocked before it started and then
-- reopened kept 0 on its missions.
CREATE TRIGGER missions_voyage_active_insert AFTER INSERT ON missions WHEN NEW.voyage_id IS NOT NULL BEGIN
  UPDATE missions SET voyage_active = coalesce((SELECT v.state IN ('active','blocked') FROM voyages AS v WHERE v.id = NEW.voyage_id), 0)
   WHERE id = NEW.id;
END;
CREATE TRIGGER voyages_active_copy AFTER UPDATE OF state ON voyages
  WHEN (OLD.state IN ('active','blocked')) <> (NEW.state IN ('active','blocked')) BEGIN
  UPDATE missions SET voyage_active = (NEW.state IN ('active','blocked'))
   WHERE voyage_id = NEW.id AND voyage_active <> (NEW.state IN ('active','blocked'));
END;
-- Carry the rows written before: each mission takes its voyage's state now.
UPDATE missions SET voyage_active = coalesce((SELECT v.state IN ('active','blocked') FROM voyages AS v WHERE v.id = missions.voyage_id), 0)
 WHERE voyage_id IS NOT NULL;
