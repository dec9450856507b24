// Package postgres is the PostgreSQL backend of the scheduler's store (issue 14), built on
// pgx. So far it holds the schema (migrations/, numbered like the SQLite backend's) and its
// migration (Migrate, SchemaVersion); the engine's store seam (engine.Store) is not
// implemented here yet and nothing wires this package into the server.
package postgres
