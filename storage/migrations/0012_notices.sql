-- Schema 12 (issue 15, notifications): the durable outbox of [[notify]] deliveries. The leader
-- turns events into notices (one row per sink) and moves notice_cursor past those events in
-- the same transaction, so that an event is turned into notices exactly once, and a notice
-- stays until it is delivered (the row is deleted) or given up (gave_up_at set, kept for
-- doctor until pruned). The cursor starts at the newest event: a database that existed before
-- notifications is not replayed into them.
CREATE TABLE notice_cursor (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL
) STRICT;
INSERT INTO notice_cursor (id, seq) SELECT 1, coalesce(max(seq), 0) FROM events;

CREATE TABLE notices (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  sink       TEXT NOT NULL,
  event_seq  INTEGER NOT NULL,
  type       TEXT NOT NULL,
  body       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  attempts   INTEGER NOT NULL DEFAULT 0,
  next_at    INTEGER NOT NULL,
  last_error TEXT NOT NULL DEFAULT '',
  gave_up_at INTEGER
) STRICT;
CREATE INDEX notices_due ON notices (next_at, id) WHERE gave_up_at IS NULL;
CREATE INDEX notices_gave_up ON notices (gave_up_at, id) WHERE gave_up_at IS NOT NULL;
