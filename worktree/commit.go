package worktree

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// WorkspaceStatus is what `git status` says about a workspace.
type WorkspaceStatus struct {
	// Clean is true when nothing is modified, staged, deleted or untracked (ignored files and
	// .mcp-scheduler/ do not count).
	Clean bool
	// Paths lists changed and untracked paths (untracked directories end in "/").
	Paths []string
	// Unmerged lists paths with unresolved merge conflicts.
	Unmerged []string
}

// statusEntry is one record of `git status --porcelain=v1 -z`.
type statusEntry struct {
	xy   string
	path string
}

func (e statusEntry) unmerged() bool {
	switch e.xy {
	case "DD", "AU", "UD", "UA", "DU", "AA", "UU":
		return true
	}
	return false
}

// Status reports whether a workspace has uncommitted work. It never takes git's index lock
// (`--no-optional-locks`), so polling it while an agent runs git is safe (B16).
func (m *Manager) Status(ctx context.Context, ws Workspace) (WorkspaceStatus, error) {
	if _, err := m.ownedPath(ws); err != nil {
		return WorkspaceStatus{}, err
	}
	entries, err := m.statusEntries(ctx, ws.Path)
	if err != nil {
		return WorkspaceStatus{}, err
	}
	st := WorkspaceStatus{Clean: len(entries) == 0}
	for _, e := range entries {
		st.Paths = append(st.Paths, e.path)
		if e.unmerged() {
			st.Unmerged = append(st.Unmerged, e.path)
		}
	}
	return st, nil
}

func (m *Manager) statusEntries(ctx context.Context, dir string) ([]statusEntry, error) {
	out, err := m.git.run(ctx, dir, runOpts{readOnly: true}, "--no-optional-locks", "status",
		"--porcelain=v1", "-z", "--untracked-files=normal")
	if err != nil {
		return nil, fmt.Errorf("status of %s: %w", dir, err)
	}
	return parseStatusZ(out), nil
}

// parseStatusZ reads the output of `git status --porcelain=v1 -z`: "XY PATH" entries, each
// NUL-terminated, a rename or copy followed by its original path.
func parseStatusZ(out []byte) []statusEntry {
	var entries []statusEntry
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		entries = append(entries, statusEntry{xy: f[:2], path: f[3:]})
		if f[0] == 'R' || f[0] == 'C' {
			i++ // the original path of a rename or copy
		}
	}
	return entries
}

// CommitPending commits whatever the agent left uncommitted in a workspace (`git add -A`,
// then `git commit` with the configured author, hooks off, the message through stdin, trailers
// Mission-Id and Attempt appended). It returns the workspace's HEAD commit afterwards and
// whether a commit was made. A merge the agent concluded without committing (MERGE_HEAD) is
// committed too; unmerged paths that still hold conflict markers give ErrUnresolvedConflicts.
// A stale index.lock is removed only when provably stale, otherwise the commit is retried with
// backoff (B16). Read-only workspaces give ErrReadOnlyWorkspace; a workspace whose HEAD left
// its branch gives ErrInvalidRef.
func (m *Manager) CommitPending(ctx context.Context, ws Workspace, message string) (commit string, changed bool, err error) {
	if err := m.checkOpen(); err != nil {
		return "", false, err
	}
	if _, err := m.ownedPath(ws); err != nil {
		return "", false, fmt.Errorf("commit pending: %w", err)
	}
	changed, err = m.commitPending(ctx, ws, message)
	if err != nil {
		return "", false, fmt.Errorf("commit pending in %s: %w", ws.Path, err)
	}
	out, err := m.git.run(ctx, ws.Path, runOpts{readOnly: true}, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", changed, fmt.Errorf("commit pending in %s: %w", ws.Path, err)
	}
	return strings.TrimSpace(string(out)), changed, nil
}

// commitPending is CommitPending without the ownership check and the final rev-parse.
func (m *Manager) commitPending(ctx context.Context, ws Workspace, message string) (bool, error) {
	if ws.ReadOnly {
		return false, ErrReadOnlyWorkspace
	}
	gitDir, err := gitDirOf(ws.Path)
	if err != nil {
		return false, err
	}
	if err := checkOnBranch(gitDir, ws.Branch); err != nil {
		return false, err
	}
	entries, err := m.statusEntries(ctx, ws.Path)
	if err != nil {
		return false, err
	}
	_, mergeErr := os.Stat(filepath.Join(gitDir, "MERGE_HEAD"))
	return m.commitSeen(ctx, ws, message, entries, mergeErr == nil)
}

// commitSeen commits a workspace's pending work given what `git status` listed in it (entries)
// and whether a concluded merge waits (merging): nothing when both say clean, an error for
// unresolved conflicts, else `git add -A`, less what is not the agent's work to land
// (unstageForeign), and `git commit` (see CommitPending).
func (m *Manager) commitSeen(ctx context.Context, ws Workspace, message string, entries []statusEntry, merging bool) (bool, error) {
	if len(entries) == 0 && !merging {
		return false, nil
	}
	if err := unresolvedConflicts(ws.Path, entries); err != nil {
		return false, err
	}
	err := m.gitLocks.retry(ctx, func() error {
		_, err := m.git.run(ctx, ws.Path, runOpts{}, "add", "-A")
		return err
	})
	if err != nil {
		return false, err
	}
	if _, err := m.unstageForeign(ctx, ws); err != nil {
		return false, err
	}
	msg := withTrailers(message, "Commit the work the agent left uncommitted", ws.MissionID, ws.Attempt)
	committed := true
	err = m.gitLocks.retry(ctx, func() error {
		_, err := m.git.run(ctx, ws.Path, runOpts{stdin: []byte(msg)}, "commit", "--no-verify",
			"--no-gpg-sign", "--quiet", "--cleanup=whitespace", "-F", "-")
		if err != nil && exitCode(err) == 1 && nothingToCommit(err) {
			committed = false
			return nil
		}
		return err
	})
	if err != nil {
		return false, err
	}
	return committed, nil
}

// nothingToCommit recognises `git commit` refusing because the index equals HEAD (status saw
// only stat changes, or changes git normalises away, such as line endings).
func nothingToCommit(err error) bool {
	msg := stderrOf(err)
	return strings.Contains(msg, "nothing to commit") || strings.Contains(msg, "nothing added to commit") ||
		strings.Contains(msg, "no changes added to commit")
}

// checkOnBranch verifies that the checkout's HEAD is the branch the workspace belongs to, so
// pending work is never committed onto another branch.
func checkOnBranch(gitDir, branch string) error {
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return fmt.Errorf("read HEAD: %w", err)
	}
	head := strings.TrimSpace(string(data))
	if head != "ref: refs/heads/"+branch {
		for _, dir := range []string{"rebase-merge", "rebase-apply"} {
			if _, err := os.Stat(filepath.Join(gitDir, dir)); err == nil {
				return fmt.Errorf("%w: a rebase is in progress in the workspace", ErrUnresolvedConflicts)
			}
		}
		return fmt.Errorf("%w: workspace HEAD is %q, not branch %q", ErrInvalidRef, head, branch)
	}
	return nil
}

var repoIDPattern = regexp.MustCompile(`^[0-9a-f]{12}$`)

var conflictMarker = regexp.MustCompile(`^(<{7}|>{7})( |$)`)

// unresolvedConflicts fails when an unmerged path still contains conflict markers. A path the
// agent edited clean (markers gone) counts as resolved: `git add` will record it.
func unresolvedConflicts(dir string, entries []statusEntry) error {
	var bad []string
	for _, e := range entries {
		if e.unmerged() && hasConflictMarkers(filepath.Join(dir, e.path)) {
			bad = append(bad, e.path)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrUnresolvedConflicts, strings.Join(bad, ", "))
	}
	return nil
}

func hasConflictMarkers(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if conflictMarker.Match(sc.Bytes()) {
			return true
		}
	}
	return false
}

// withTrailers returns the message (or fallback when empty) followed by the trailers that tie
// a commit to its mission attempt.
func withTrailers(message, fallback, missionID string, attempt int) string {
	msg := strings.TrimSpace(message)
	if msg == "" {
		msg = fallback
	}
	var b bytes.Buffer
	b.WriteString(msg)
	if missionID != "" {
		b.WriteString("\n\nMission-Id: " + missionID + "\nAttempt: " + strconv.Itoa(attempt))
	}
	b.WriteString("\n")
	return b.String()
}

// mergeTargetInto merges the target tip into a new repair workspace and leaves conflict
// markers for the agent; ws.Conflicts lists the conflicting paths.
func (m *Manager) mergeTargetInto(ctx context.Context, ws *Workspace, targetTip string) error {
	if targetTip == "" {
		return fmt.Errorf("%w: MergeTarget needs an existing target branch", ErrUnknownRef)
	}
	msg := fmt.Sprintf("Merge %s into %s", ws.TargetBranch, ws.Branch)
	_, err := m.git.run(ctx, ws.Path, runOpts{pointers: true}, "merge", "--no-ff", "--no-edit", "--no-verify",
		"-m", msg, "--end-of-options", targetTip)
	if err == nil {
		return nil
	}
	if exitCode(err) != 1 {
		return fmt.Errorf("merge target into workspace: %w", err)
	}
	out, derr := m.git.run(ctx, ws.Path, runOpts{readOnly: true}, "diff", "--name-only", "--diff-filter=U", "-z")
	if derr != nil {
		return fmt.Errorf("list conflicts: %w", derr)
	}
	ws.Conflicts = splitZ(out)
	if len(ws.Conflicts) == 0 {
		return fmt.Errorf("merge target into workspace: %w", err)
	}
	return nil
}

func splitZ(out []byte) []string {
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// ownedPath checks that a workspace handed in by the engine belongs to a repository under this
// data directory (by its RepoID) and is not the main checkout.
func (m *Manager) ownedPath(ws Workspace) (string, error) {
	if !repoIDPattern.MatchString(ws.RepoID) {
		return "", fmt.Errorf("%w: workspace has no valid repo id", ErrPathEscapes)
	}
	return m.checkOwned(&Repo{id: ws.RepoID}, ws)
}
