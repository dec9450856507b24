package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// registration is one entry of `git worktree list --porcelain -z`.
type registration struct {
	Path     string
	Head     string // commit id; "" for an unborn branch
	Branch   string // short branch name; "" when detached
	Bare     bool
	Locked   bool
	Prunable bool
}

// listWorktrees runs `git worktree list --porcelain -z` in the repository. The first entry is
// the main worktree.
//
// A worktree that another process (or goroutine) is adding right now has its administrative
// directory (.git/worktrees/<name>) before its files, and git then fails with "failed to read
// .git/worktrees/<name>/commondir" (seen under load, where the window is wide). That is a
// concurrent change, not a broken repository: the listing is tried again a few times, then
// the error wraps ErrConcurrentChange so that callers retry the attempt instead of failing it.
func (m *Manager) listWorktrees(ctx context.Context, r *Repo) ([]registration, error) {
	var err error
	for try := range listTries {
		var out []byte
		out, err = m.git.run(ctx, r.root, runOpts{readOnly: true}, "worktree", "list", "--porcelain", "-z")
		if err == nil {
			return parseWorktreeList(out), nil
		}
		if !halfAddedWorktree(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("list worktrees: %w", err)
		}
		select {
		case <-time.After(time.Duration(try+1) * 50 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	return nil, fmt.Errorf("list worktrees: %w: %w", ErrConcurrentChange, err)
}

// listTries bounds the listing's retries while another worktree is being added.
const listTries = 5

// ErrConcurrentChange: git met the repository in the middle of another process's change (a
// worktree being added); trying again later succeeds.
var ErrConcurrentChange = errors.New("the repository changed under us (a worktree being added); try again")

// halfAddedWorktree reports whether git failed on a worktree's administrative files that a
// concurrent `git worktree add` has not written yet.
func halfAddedWorktree(err error) bool {
	var ge *GitError
	if !errors.As(err, &ge) {
		return false
	}
	msg := ge.Stderr
	return strings.Contains(msg, "failed to read") && strings.Contains(msg, "worktrees/") &&
		(strings.Contains(msg, "commondir") || strings.Contains(msg, "gitdir") || strings.Contains(msg, "HEAD"))
}

func parseWorktreeList(out []byte) []registration {
	var regs []registration
	var cur *registration
	for _, field := range bytes.Split(out, []byte{0}) {
		f := string(field)
		key, val, _ := strings.Cut(f, " ")
		switch {
		case f == "":
			cur = nil
		case key == "worktree":
			regs = append(regs, registration{Path: val})
			cur = &regs[len(regs)-1]
		case cur == nil:
		case key == "HEAD":
			cur.Head = val
		case key == "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case key == "bare":
			cur.Bare = true
		case key == "locked":
			cur.Locked = true
		case key == "prunable":
			cur.Prunable = true
		}
	}
	return regs
}

// checkoutsHolding returns the existing checkouts (top-level paths) in which branch is checked
// out, being rebased or being bisected: the cases in which git itself calls a branch "in use"
// (find_shared_symref). It reads the administrative files directly (no process), which keeps
// landing fast. Registrations whose directory is gone are ignored: nothing is checked out
// there.
func (m *Manager) checkoutsHolding(r *Repo, branch string) ([]string, error) {
	ref := "refs/heads/" + branch
	admins := []string{r.commonDir}
	entries, err := os.ReadDir(filepath.Join(r.commonDir, "worktrees"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list worktree registrations: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			admins = append(admins, filepath.Join(r.commonDir, "worktrees", e.Name()))
		}
	}
	var holders []string
	for _, admin := range admins {
		if !adminHolds(admin, ref, branch) {
			continue
		}
		path, ok := checkoutPath(r, admin)
		if !ok {
			continue
		}
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			holders = append(holders, path)
		}
	}
	return holders, nil
}

func adminHolds(admin, ref, branch string) bool {
	read := func(name string) string {
		data, _ := os.ReadFile(filepath.Join(admin, name))
		return strings.TrimSpace(string(data))
	}
	if read("HEAD") == "ref: "+ref {
		return true
	}
	for _, name := range []string{"rebase-merge/head-name", "rebase-apply/head-name"} {
		if read(name) == ref {
			return true
		}
	}
	return read("BISECT_START") == branch
}

// checkoutPath maps an administrative directory to its checkout: the main worktree for the
// common dir, else the directory holding the `.git` file recorded in <admin>/gitdir.
func checkoutPath(r *Repo, admin string) (string, bool) {
	if admin == r.commonDir {
		return r.mainRoot, r.mainRoot != ""
	}
	data, err := os.ReadFile(filepath.Join(admin, "gitdir"))
	if err != nil {
		return "", false
	}
	return filepath.Dir(strings.TrimSpace(string(data))), true
}

// gitDirOf returns the git directory of a checkout: <dir>/.git when it is a directory, or the
// target of a `gitdir:` file (linked worktrees).
func gitDirOf(dir string) (string, error) {
	p := filepath.Join(dir, ".git")
	st, err := os.Lstat(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrWorkspaceGone, dir, err)
	}
	if st.IsDir() {
		return p, nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	line := strings.TrimSpace(string(data))
	target, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%s: not a gitdir file", p)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return filepath.Clean(target), nil
}

// registeredAt reports whether a linked worktree registration points at path (read from the
// administrative files, as `git worktree list` would, without starting a process).
func registeredAt(r *Repo, path string) (bool, error) {
	dir := filepath.Join(r.commonDir, "worktrees")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("list worktree registrations: %w", err)
	}
	for _, e := range entries {
		if p, ok := checkoutPath(r, filepath.Join(dir, e.Name())); ok && p == path {
			return true, nil
		}
	}
	return false, nil
}
