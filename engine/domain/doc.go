// Package domain is the leaf of mcp-scheduler: the things the scheduler is about and the rules
// that hold for them whatever stores or moves them (design brief §1–§2). Missions and their
// eight states with the transition table (state.go, drawn in docs/state-machine.md), voyages,
// dependencies, escalations, attempts, landings and their states, agents and waves (types.go);
// an attempt's result, failure kinds and usage as the engine stores them (result.go; the agent
// protocol's wire shapes convert to these at the boundary, engine.ResultFromWire); the errors
// every layer answers with, each with a hint for the caller (errors.go); id validation
// (ids.go), UTF-8-safe clipping of quoted input (clip.go), and the characters people cannot
// see in text they read, refused in names and escaped in free text where it is shown
// (hidden.go: Hidden, CheckName, Shown).
//
// It imports nothing of the module (a test in cmd/mcp-scheduler checks the import graph), so
// that every other package can depend on it and it on none of them: the engine decides with
// these types, storage persists them, tools and the CLI show them.
package domain
