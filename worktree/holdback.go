package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// stagedEntry is one record of `git diff --cached --raw -z --no-renames`.
type stagedEntry struct {
	dstMode string // "120000" for a symbolic link, "000000" for a deletion
	status  byte   // A, M, D, T
	path    string
}

// parseRawZ reads `git diff --raw -z --no-renames`: ":<src mode> <dst mode> <src> <dst>
// <status>" NUL path NUL, per changed path.
func parseRawZ(out []byte) []stagedEntry {
	var entries []stagedEntry
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 || meta[4] == "" {
			break
		}
		entries = append(entries, stagedEntry{dstMode: meta[1], status: meta[4][0], path: fields[i+1]})
	}
	return entries
}

// heldBack is a staged change our commit of leftover work leaves out, and why.
type heldBack struct {
	path string
	why  string
}

// unstageForeign runs between `git add -A` and `git commit` of the work an agent left
// uncommitted, and unstages what is not the agent's work to land (the agent can still commit
// it itself, and a landing then judges it):
//
//   - a symbolic link that points outside the repository (linkEscapes): an agent's
//     `ln -s <repo>/node_modules node_modules` made for its tools (B68). One the repository
//     tracks unchanged is not staged at all;
//   - where core.ignorecase is set, a change to a tracked path that differs only by case from
//     another tracked path (B67): on a case-insensitive file system the two are one file, and
//     the change may be nobody's.
//
// Each path left out is logged with its reason and stays in the workspace, uncommitted.
func (m *Manager) unstageForeign(ctx context.Context, ws Workspace) ([]heldBack, error) {
	out, err := m.git.run(ctx, ws.Path, runOpts{readOnly: true}, "diff", "--cached", "--no-renames", "--raw", "-z")
	if err != nil {
		return nil, fmt.Errorf("list staged changes: %w", err)
	}
	staged := parseRawZ(out)
	if len(staged) == 0 {
		return nil, nil
	}
	held := map[string]string{}
	for _, e := range staged {
		if e.dstMode != "120000" {
			continue
		}
		target, err := os.Readlink(filepath.Join(ws.Path, filepath.FromSlash(e.path)))
		if err == nil && linkEscapes(e.path, target) {
			held[e.path] = "a symbolic link to " + target + ", outside the repository"
		}
	}
	groups, err := m.caseCollisions(ctx, ws.Path)
	if err != nil {
		return nil, err
	}
	set := collisionSet(groups)
	for _, e := range staged {
		if g, ok := set[e.path]; ok && held[e.path] == "" {
			held[e.path] = "differs only by case from another tracked path (" + strings.Join(g, ", ") + ") and core.ignorecase is set"
		}
	}
	return m.unstage(ctx, ws, staged, held)
}

// unstage resets the index entries of the held paths to HEAD and logs each.
func (m *Manager) unstage(ctx context.Context, ws Workspace, staged []stagedEntry, held map[string]string) ([]heldBack, error) {
	if len(held) == 0 {
		return nil, nil
	}
	var out []heldBack
	args := []string{"reset", "-q", "--"}
	for _, e := range staged { // in git's order
		if why, ok := held[e.path]; ok {
			out = append(out, heldBack{path: e.path, why: why})
			args = append(args, ":(literal)"+e.path)
		}
	}
	err := m.gitLocks.retry(ctx, func() error {
		_, err := m.git.run(ctx, ws.Path, runOpts{}, args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("leave out of the commit of leftover work: %w", err)
	}
	for _, h := range out {
		m.log.Warn("left uncommitted in the workspace: not the agent's work to land", "mission_id", ws.MissionID,
			"attempt", ws.Attempt, "path", h.path, "why", h.why)
	}
	return out, nil
}
