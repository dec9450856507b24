// Package engine is the durable core of mcp-scheduler: the operations on missions and voyages
// and the rules that decide them (design brief §1–§4), over the types of package domain. It
// decides; the Store (package storage, SQLite) remembers. Every
// other part — MCP tools, the scheduler loop, the CLI — changes missions only through it.
//
// # Overview
//
// A mission is one unit of work for one agent; a voyage is a batch of missions dispatched
// together. Missions move through eight states (domain.MissionState; docs/state-machine.md
// draws the table in engine/domain/state.go). The engine keeps no missions in memory: each operation reads what
// it needs and writes its change inside one store transaction, so several goroutines and
// several processes sharing one database file see one consistent scheduler.
//
// # Transactions
//
// Each operation is one Store.Update: one guarded write per transition (a compare-and-set
// on id, state and epoch) plus its event row, committed together or not at all. Reads inside
// the same transaction see exactly what the write will replace (SQLite BEGIN IMMEDIATE holds
// the write lock from the start), and the write's guard still refuses to apply to a row that
// changed, so a decision can never rest on a stale read. Events are published to the Hub
// only after the commit.
//
// # Leases and fencing
//
// Acquiring a mission creates a lease: an owner, an expiry and an epoch. The epoch grows by
// one on every acquire of that mission, forever, and is the fencing token: every ownership
// operation presents (mission id, epoch), and one presented with an old epoch changes nothing
// and returns ErrLeaseLost. An agent that loses its lease — because it stopped heartbeating,
// was cancelled, or its mission was handed to someone else — can therefore never overwrite
// the newer attempt's state, and its result is never landed. Heartbeats extend the lease
// without an event row and write at most once per RenewInterval. Leases that expire are
// reaped (ReapExpired): when the agent was heard from (a heartbeat, progress, a checkpoint)
// the attempt counts as a crash failure and the mission is retried, or resumed from its
// checkpoint; when it never was, the attempt is abandoned (no budget; AbandonLimit in a row
// block the mission). A pull-mode claim is taken in steps (BeginClaim, then HandOver or
// Fail): between them the caller (the scheduler's pull service) makes the workspace under a
// lease the engine keeps alive, and the caller's lease clock starts only at the hand-over.
// The reaper reads expired leases from a snapshot and re-checks
// state, epoch and expiry inside each update, so a completion that commits in between wins.
//
// # Ordering
//
// Acquire picks, in one statement, the first runnable mission in the order of design brief
// §3: priority ascending (1 = urgent, default 100), missions of an active voyage first,
// resumed (interrupted) before fresh, FIFO by creation, then id. Runnable means pending or
// interrupted without a wait reason, backoff passed, every hard dependency completed and
// landed, every serialization predecessor terminal, no conflict partner leased or running,
// no exclusive mission (one without a write area) sharing the repository, and the scheduler
// not paused. Explain states the same rules in Go and says which one holds a mission back.
//
// # Failure handling
//
// Fail applies the retry policy (policy.go): a normalised failure signature, a weighted
// budget (an identical signature counts double), environment failures that block with an
// escalation instead of retrying, and decisions retry, retry_serial, debug, block and fail,
// each recorded with its reason. A mission that fails or is cancelled blocks its transitive
// hard dependents with one escalation naming it; retrying it reopens them.
//
// # Events and replay
//
// The events table is append-only. Every state change is an event that carries its target
// state (and its source state, except acquires), so Replay can rebuild every mission's state,
// epoch, attempt, priority and landing from the log alone; VerifyReplay compares that with
// the tables.
package engine
