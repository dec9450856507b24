// Package postgres is the PostgreSQL backend of the scheduler's store, built on pgx: the
// engine's store seam (engine.Store), passing the same conformance suite as the SQLite
// backend (storage/storetest). The schema (migrations/) keeps SQLite's tables and columns and
// its version numbers; Open migrates under an advisory lock and refuses a newer database
// (ErrSchemaTooNew). Update runs at SERIALIZABLE and is run again when PostgreSQL aborts it as
// a serialization failure or deadlock (serializable); rules that span rows rely on that (see
// pick.go for the acquire, events.go for the event sequence). Every write transaction
// NOTIFYs ChangeChannel and Changes LISTENs on it: other processes and nodes are noticed
// without polling. Selected by configuration ([storage] url, MCP_SCHEDULER_DATABASE_URL).
package postgres
