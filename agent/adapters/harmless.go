package adapters

import (
	"regexp"
	"strings"
)

// gitRecordStep is one step of a shell command that only records work in the workspace's
// own repository (stage, commit, look): `git add`, `git commit`, `git status`, `git diff`,
// `git log`, with options such as -C <dir>.
var gitRecordStep = regexp.MustCompile(`^git(\s+-C\s+\S+)?\s+(add|commit|status|diff|log)(\s|$)`)

// shellChain separates the steps of a chained shell command.
var shellChain = regexp.MustCompile(`&&|;|\|\|`)

// onlyRecordsWork reports whether a refused shell command did nothing but stage or commit
// work: the scheduler commits what an agent leaves uncommitted (the brief says so), so such
// a refusal costs nothing and is no permission failure. Codex's sandbox keeps the worktree's
// .git read-only in workspace-write, and Claude Code's acceptEdits denies Bash, so agents
// meet this refusal routinely. The command may be wrapped in `bash -lc "…"` (Codex) and
// chained with && or ;.
func onlyRecordsWork(command string) bool {
	c := strings.TrimSpace(command)
	for _, shell := range []string{"/bin/bash -lc ", "bash -lc ", "/bin/sh -c ", "sh -c "} {
		if rest, ok := strings.CutPrefix(c, shell); ok {
			c = strings.Trim(strings.TrimSpace(rest), `"'`)
			break
		}
	}
	if c == "" {
		return false
	}
	for _, step := range shellChain.Split(c, -1) {
		if !gitRecordStep.MatchString(strings.TrimSpace(step)) {
			return false
		}
	}
	return true
}
