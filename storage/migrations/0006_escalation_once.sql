-- Schema 6: escalations raised once (engine.EscalateOnce) carry their de-duplication key, the
-- cause kind and the subject ("checkout:m-…"), so that "raise once" holds across leaders and
-- restarts: at most one open escalation per key, which the unique index keeps on any writer.
-- A resolved escalation keeps its key as history; the same cause may raise a new one then.
-- Open escalations of the kinds raised once before schema 6 (an in-memory set of keys then)
-- get their key, the earliest of each group; duplicates a restarted leader raised stay open
-- without one, for a person to close.
ALTER TABLE escalations ADD COLUMN once_key TEXT;

UPDATE escalations SET once_key = kind || ':' || json_extract(mission_ids, '$[0]')
WHERE state = 'open' AND json_array_length(mission_ids) = 1
  AND kind IN ('no_agent', 'approval', 'checkout', 'conflict', 'checks', 'review')
  AND id = (SELECT e2.id FROM escalations e2
            WHERE e2.state = 'open' AND e2.kind = escalations.kind AND json_array_length(e2.mission_ids) = 1
              AND json_extract(e2.mission_ids, '$[0]') = json_extract(escalations.mission_ids, '$[0]')
            ORDER BY e2.created_at, e2.id LIMIT 1);

CREATE UNIQUE INDEX escalations_once ON escalations (once_key) WHERE once_key IS NOT NULL AND state = 'open';
