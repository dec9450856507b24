-- Schema 11 (Armada's ordering rule, found by a fresh-user trial): "missions that belong to an
-- active or in-progress voyage are prioritized over standalone missions" (shared/cases/
-- armada-scheduling.md). A voyage that was dispatched but none of whose missions started yet
-- (state open) is such a voyage too: before, its missions lost the tiebreak to an older
-- standalone mission of the same priority. missions.voyage_active becomes the voyage's stage
-- as the pick needs it: 2 in progress (active or blocked: the engine records no activation
-- for it), 1 open (the next acquire activates it), 0 no voyage or a finished one. The pick
-- order's tiebreak is voyage_active > 0 (open, active and blocked alike, as Armada's rule),
-- and its index is rebuilt on that expression.
DROP TRIGGER missions_voyage_active_insert;
DROP TRIGGER voyages_active_copy;
CREATE TRIGGER missions_voyage_active_insert AFTER INSERT ON missions WHEN NEW.voyage_id IS NOT NULL BEGIN
  UPDATE missions SET voyage_active = coalesce((SELECT CASE v.state WHEN 'active' THEN 2 WHEN 'blocked' THEN 2 WHEN 'open' THEN 1 ELSE 0 END
      FROM voyages AS v WHERE v.id = NEW.voyage_id), 0)
   WHERE id = NEW.id;
END;
CREATE TRIGGER voyages_active_copy AFTER UPDATE OF state ON voyages WHEN OLD.state <> NEW.state BEGIN
  UPDATE missions SET voyage_active = CASE NEW.state WHEN 'active' THEN 2 WHEN 'blocked' THEN 2 WHEN 'open' THEN 1 ELSE 0 END
   WHERE voyage_id = NEW.id
     AND voyage_active <> CASE NEW.state WHEN 'active' THEN 2 WHEN 'blocked' THEN 2 WHEN 'open' THEN 1 ELSE 0 END;
END;
UPDATE missions SET voyage_active = coalesce((SELECT CASE v.state WHEN 'active' THEN 2 WHEN 'blocked' THEN 2 WHEN 'open' THEN 1 ELSE 0 END
    FROM voyages AS v WHERE v.id = missions.voyage_id), 0)
 WHERE voyage_id IS NOT NULL;
DROP INDEX missions_pick;
CREATE INDEX missions_pick ON missions (priority, (voyage_active > 0) DESC, (state = 'interrupted') DESC, created_at, id)
  WHERE state IN ('pending','interrupted');
