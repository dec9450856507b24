-- Schema 5: the planner reads only the agents seen recently (external agents that may still
-- claim), through an index, instead of every agent ever seen; and the retention's candidate
-- walk (finished missions in creation order, storage/retention.go) has its (state,
-- created_at) index again (schema 4 dropped it as unused before retention existed).
CREATE INDEX agents_last_seen ON agents (last_seen);
CREATE INDEX missions_state ON missions (state, created_at);
