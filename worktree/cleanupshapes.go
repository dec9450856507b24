package worktree

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// keptLink reports e (a workspace or mission directory) as kept, reason "symlink", when its
// path was replaced by a symbolic link: cleanup follows no link, so neither the link nor what
// it points at is touched (B68).
func (c *cleaner) keptLink(e CleanupEntry) (bool, error) {
	target, linked, err := linkedAway(e.Path)
	if err != nil || !linked {
		return false, err
	}
	e.Reason = "symlink"
	e.Detail = fmt.Sprintf("%s was replaced by a symbolic link to %s: cleanup follows no link, so neither is touched; "+
		"remove the link by hand (rm %s, never rm -r)", e.Path, target, e.Path)
	c.rep.Kept = append(c.rep.Kept, e)
	return true, nil
}

// workState says why a checkout may not be removed as it is: reason "" (nothing uncommitted
// that is work), "dirty", or "case_collision" (only paths that differ from another tracked
// path by case are changed), with a detail for the last.
type workState struct {
	reason string
	detail string
}

// uncommittedWork looks at a checkout's `git status` for work that removing it would lose. An
// untracked (or only staged) symbolic link that points outside the repository is not work:
// our commit of leftover work never commits it and a landing refuses it, so it never lands
// (an agent's `ln -s <repo>/node_modules node_modules`); removing the checkout removes the
// link, never what it points at.
func (m *Manager) uncommittedWork(ctx context.Context, dir string) (workState, error) {
	entries, err := m.statusEntries(ctx, dir)
	if err != nil {
		return workState{}, err
	}
	var work []statusEntry
	for _, e := range entries {
		if !escapingUntrackedLink(dir, e) {
			work = append(work, e)
		}
	}
	if len(work) == 0 {
		return workState{}, nil
	}
	groups, err := m.caseCollisions(ctx, dir)
	if err != nil {
		return workState{}, err
	}
	set := collisionSet(groups)
	var colliding []string
	for _, e := range work {
		g, ok := set[e.path]
		if !ok {
			return workState{reason: "dirty"}, nil
		}
		colliding = append(colliding, strings.Join(g, " and "))
	}
	return workState{reason: "case_collision", detail: "uncommitted changes only in tracked paths that differ only by case (" +
		strings.Join(dedupe(colliding), "; ") + "): core.ignorecase is set, so on this file system they may be one file " +
		"and show a change nobody made; it was not committed. Look at `git -C " + dir + " diff`, then remove the workspace by hand " +
		"(git worktree remove --force " + dir + ") when nothing in it is needed"}, nil
}

// escapingUntrackedLink reports whether a status entry is an untracked or newly staged path
// that is a symbolic link pointing outside the checkout (linkEscapes).
func escapingUntrackedLink(dir string, e statusEntry) bool {
	if e.xy != "??" && e.xy != "A " {
		return false
	}
	p := filepath.Join(dir, filepath.FromSlash(e.path))
	st, err := os.Lstat(p)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	target, err := os.Readlink(p)
	return err == nil && linkEscapes(e.path, target)
}
