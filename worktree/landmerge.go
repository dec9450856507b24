package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// mergeCommit merges in the object database; done=true when the merge conflicted (l says so).
// base is the proven only merge base of l.OldTarget and l.BranchTip, or "" when not known:
// with it, a merge where no path changed on both sides is written by the tree walk
// (trivialMergeTree) instead of `git merge-tree --write-tree`.
func (m *Manager) mergeCommit(ctx context.Context, req LandRequest, l *Landing, base string) (done bool, err error) {
	tree, conflicts, detail, err := m.mergedTree(ctx, req.Repo, base, l.OldTarget, l.BranchTip)
	if err != nil {
		return false, err
	}
	if len(conflicts) > 0 {
		l.Status, l.ConflictPaths, l.Detail = LandConflicted, conflicts, detail
		return true, nil
	}
	fallback := fmt.Sprintf("Land mission %s attempt %d", req.MissionID, req.Attempt)
	msg := withTrailers(req.Message, fallback, req.MissionID, req.Attempt)
	if l.Commit, err = m.writeMerge(ctx, req.Repo, tree, l.OldTarget, l.BranchTip, msg); err != nil {
		return false, err
	}
	step("merge.written")
	return false, nil
}

// mergeBase returns the best common ancestor of a and b; unrelated histories are an error.
func (m *Manager) mergeBase(ctx context.Context, r *Repo, a, b string) (string, error) {
	out, err := m.git.run(ctx, r.root, runOpts{readOnly: true}, "merge-base", "--end-of-options", a, b)
	if exitCode(err) == 1 {
		return "", fmt.Errorf("%s and %s have no common history", a, b)
	}
	if err != nil {
		return "", fmt.Errorf("merge base: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// mergedTree returns the merged tree of ours and theirs: from the tree walk when base is the
// proven merge base, the configuration lets objects be written without git and no path
// changed on both sides; otherwise from `git merge-tree --write-tree` (mergeTree).
func (m *Manager) mergedTree(ctx context.Context, r *Repo, base, ours, theirs string) (tree string, conflicts []string, detail string, err error) {
	if base != "" && r.native.reason(ctx, m, r) == "" {
		h, ok, err := r.trivialMergeTree(plumbing.NewHash(base), plumbing.NewHash(ours), plumbing.NewHash(theirs))
		if err != nil {
			return "", nil, "", err
		}
		if ok {
			return h.String(), nil, "", nil
		}
	}
	return m.mergeTree(ctx, r, ours, theirs)
}

// mergeTree runs `git merge-tree --write-tree --name-only -z` and returns the merged tree or
// the conflicting paths with git's conflict messages.
func (m *Manager) mergeTree(ctx context.Context, r *Repo, ours, theirs string) (tree string, conflicts []string, detail string, err error) {
	out, err := m.git.run(ctx, r.root, runOpts{}, "merge-tree", "--write-tree", "--name-only", "-z",
		"--messages", "--end-of-options", ours, theirs)
	if err != nil && exitCode(err) != 1 {
		return "", nil, "", fmt.Errorf("merge-tree: %w", err)
	}
	if err == nil {
		return strings.Split(string(out), "\x00")[0], nil, "", nil
	}
	tree, conflicts, detail = parseMergeTreeConflicts(out)
	if len(conflicts) == 0 {
		return "", nil, "", fmt.Errorf("merge-tree reported conflicts without paths: %w", err)
	}
	return tree, conflicts, detail, nil
}

// parseMergeTreeConflicts reads the output of a `git merge-tree --write-tree --name-only -z
// --messages` that found conflicts: the tree, NUL, the conflicting paths each NUL-terminated,
// NUL, then the messages, in groups <n> NUL <n paths> NUL <type> NUL <message> NUL; it returns
// the tree, the paths (each once) and the CONFLICT messages, one a line.
func parseMergeTreeConflicts(out []byte) (tree string, conflicts []string, detail string) {
	fields := strings.Split(string(out), "\x00")
	tree = fields[0]
	i := 1
	for ; i < len(fields) && fields[i] != ""; i++ {
		conflicts = append(conflicts, fields[i])
	}
	conflicts = dedupe(conflicts)
	var msgs []string
	for i++; i < len(fields); {
		n, err := strconv.Atoi(fields[i])
		if err != nil || n < 0 || n >= len(fields)-i-2 { // a negative count indexed before the group or looped forever
			break
		}
		if msg := strings.TrimSpace(fields[i+n+2]); strings.HasPrefix(msg, "CONFLICT") {
			msgs = append(msgs, msg)
		}
		i += n + 3
	}
	return tree, conflicts, strings.Join(msgs, "\n")
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// errPendingWork: the workspace holds uncommitted work; commit it and start the landing over.
var errPendingWork = errors.New("workspace has uncommitted work")

// pendingProbe runs `git status` on a workspace in the background.
type pendingProbe struct {
	done    chan struct{}
	entries []statusEntry // what status listed
	merging bool          // a concluded merge waits (MERGE_HEAD)
	err     error
}

// probePending checks that the workspace is on its branch, then starts the status probe.
func (m *Manager) probePending(ctx context.Context, ws Workspace) (*pendingProbe, error) {
	gitDir, err := gitDirOf(ws.Path)
	if err != nil {
		return nil, err
	}
	if err := checkOnBranch(gitDir, ws.Branch); err != nil {
		return nil, err
	}
	p := &pendingProbe{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		step("probe.before-status")
		p.entries, p.err = m.statusEntries(ctx, ws.Path)
		_, mergeErr := os.Stat(filepath.Join(gitDir, "MERGE_HEAD"))
		p.merging = mergeErr == nil
	}()
	return p, nil
}

// commit commits the pending work the probe found (its status is not run again: the agent
// has exited, and `git add -A` takes the workspace as it is now). A nil probe, or one that
// failed, commits with a status of its own.
func (p *pendingProbe) commit(ctx context.Context, m *Manager, ws Workspace, message string) (bool, error) {
	p.wait()
	if p == nil || p.err != nil {
		return m.commitPending(ctx, ws, message)
	}
	gitDir, err := gitDirOf(ws.Path)
	if err != nil {
		return false, err
	}
	if err := checkOnBranch(gitDir, ws.Branch); err != nil {
		return false, err
	}
	return m.commitSeen(ctx, ws, message, p.entries, p.merging)
}

// wait blocks until the probe finished (nil-safe).
func (p *pendingProbe) wait() {
	if p != nil {
		<-p.done
	}
}

// errBranchMoved: the attempt's branch moved while the landing looked at it (a `git commit`
// left running by a killed landing finished); look at the workspace again and start over.
var errBranchMoved = errors.New("the attempt's branch moved during the landing")

// settleAt is settle, then checks that the branch still points at tip (errBranchMoved). A
// clean status only vouches for the branch as it was when status read it: a `git commit`
// orphaned by a killed landing may have moved the branch after tip was read and before
// status looked, and the workspace then looks clean although tip lacks the work (nil-safe).
func (p *pendingProbe) settleAt(r *Repo, branch, tip string) error {
	if p == nil {
		return nil
	}
	if err := p.settle(); err != nil {
		return err
	}
	now, err := r.branchTip(branch)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrWorkspaceGone, err)
	}
	if now.String() != tip {
		return errBranchMoved
	}
	return nil
}

// settle waits for the probe and returns errPendingWork when the workspace is dirty.
func (p *pendingProbe) settle() error {
	if p == nil {
		return nil
	}
	p.wait()
	if p.err != nil {
		return p.err
	}
	if len(p.entries) > 0 || p.merging {
		return errPendingWork
	}
	return nil
}
