// Package postgres is the PostgreSQL backend of the scheduler's store (issue 14), built on
// pgx. So far it holds the schema (migrations/, numbered like the SQLite backend's), its
// migration (Migrate, SchemaVersion) and the change feed the seam's Changes will use (Notify
// in each write transaction, Listen on a dedicated connection, no polling) and serializable
// write transactions retried on 40001/40P01 (serializable). The engine's store
// seam (engine.Store) is not implemented here yet and nothing wires this package in.
package postgres
