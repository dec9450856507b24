// Package storage is the SQLite implementation of engine.Store (design brief §9), on
// modernc.org/sqlite (pure Go, no cgo).
//
// # Connections
//
// Every connection gets its settings from the DSN, so each pooled connection has them
// (shared/cases B08): busy_timeout, foreign_keys, journal_mode=WAL and synchronous (NORMAL by
// default: a commit does not fsync, a crash cannot corrupt the file but may lose the last
// commits; FULL fsyncs every commit and survives power loss).
//
// Writes go through one connection owned by one goroutine (the writer). Update hands its
// function to the writer, which runs it inside BEGIN IMMEDIATE … COMMIT; several Updates that
// arrive together share one transaction, each in its own SAVEPOINT, so one failing function
// rolls back alone while the others commit together (group commit; the writer yields once
// before it closes a short batch, so that callers it just answered can join). BEGIN IMMEDIATE takes the
// write lock up front, so a transaction never fails to upgrade a read lock (B09); a lock held
// by another process is waited for (busy_timeout) and then retried with backoff, never handed
// to the caller as SQLITE_BUSY.
//
// Reads go through a small pool of read-only connections; View runs its function inside a
// read transaction, one consistent WAL snapshot.
//
// # Schema
//
// Numbered migrations are embedded (migrations/NNNN_name.sql) and applied at Open; the schema
// version lives in PRAGMA user_version. A database whose version is newer than this binary
// knows is refused with ErrSchemaTooNew.
package storage
