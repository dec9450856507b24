-- Schema 10 (issue 13, "make the hot paths leaner"): missions_state (state, created_at) serves
-- only the retention's walk of finished missions (storage/retention.go), but every transition
-- of a live mission moved its entry: an acquire (pending → leased/running), a start, a yield,
-- a release each deleted one entry and inserted another, and a completion did the same. As a
-- partial index of the finished states it is written once per mission, when it finishes (and
-- again only if a finished mission is retried). The walk names the same states in its WHERE,
-- so the planner still uses it (storage/retention_test.go asserts the plan). PostgreSQL has
-- partial indexes with the same meaning (CREATE INDEX … WHERE).
DROP INDEX missions_state;
CREATE INDEX missions_state ON missions (state, created_at) WHERE state IN ('completed','failed','cancelled');
