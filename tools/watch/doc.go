// Package watch is the view model of `mcp-scheduler watch`: a live terminal view of the
// voyages and their missions, the running agents with their last progress line, the waiting
// missions with why they wait, and the open escalations, refreshed when the data dir changes.
// Keys open a mission, follow its log and resolve an escalation (through the same engine
// operation as resolve_escalation and `mcp-scheduler escalations resolve`).
//
// Load reads a Snapshot through the engine's read operations; Model is a bubbletea model whose
// Update and View are pure (reads and the resolution run as commands, through a Source);
// Plain renders a snapshot without escape codes for output that is not a terminal. The
// command that runs it is in cmd/mcp-scheduler (watch.go); docs/watch.md describes it.
package watch
