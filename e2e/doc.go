// Package e2e holds the end-to-end tests: the built mcp-scheduler binary driven the way people
// and agents drive it — real MCP clients (Claude Code as the Main Agent, the official TypeScript
// SDK), real child agents (Claude Code, Codex, the reference agent) against the scripted model
// server of e2e/modelserver, real git repositories, SIGKILLs in the middle of voyages. Run by
// .ci/test without the race detector; e2e/testenv and e2e/modelserver are their support.
package e2e
