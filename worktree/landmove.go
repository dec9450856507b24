package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// moveTarget moves the target branch to l.Commit (step 6 of Land). The land lock is held.
// A remote repository's target moves with a compare-and-set push instead (pushTarget).
func (m *Manager) moveTarget(ctx context.Context, r *Repo, target string, l Landing) (Landing, bool, error) {
	if r.remote != nil {
		return m.pushTarget(ctx, r, target, l)
	}
	holders, err := m.checkoutsHolding(r, target)
	if err != nil {
		return l, false, err
	}
	if len(holders) == 0 {
		err := m.gitLocks.retry(ctx, func() error {
			_, err := m.git.run(ctx, r.root, runOpts{}, "update-ref", "-m", "mcp-scheduler: land "+l.BranchTip,
				"--end-of-options", "refs/heads/"+target, l.Commit, l.OldTarget)
			return err
		})
		if err != nil {
			if m.targetMoved(r, target, l.OldTarget) {
				return l, true, nil
			}
			return l, false, fmt.Errorf("update %s: %w", target, err)
		}
		l.Status, l.NewTarget = LandLanded, l.Commit
		return l, false, nil
	}
	l.Checkout = holders[0]
	unlock, err := m.lockCheckout(ctx, r, l.Checkout)
	if err != nil {
		return l, false, err
	}
	defer unlock()
	if m.targetMoved(r, target, l.OldTarget) {
		return l, true, nil
	}
	err = m.gitLocks.retry(ctx, func() error {
		if err := refLocksFree(l.Checkout, r.commonDir, target); err != nil {
			return err
		}
		return m.fastForward(ctx, l.Checkout, l.Commit)
	})
	if err != nil {
		if ctx.Err() != nil {
			return l, false, ctx.Err()
		}
		if m.targetMoved(r, target, l.OldTarget) {
			return l, true, nil
		}
		var ge *GitError
		if !errors.As(err, &ge) {
			return l, false, err
		}
		if done, rerr := m.retryOverIdenticalFiles(ctx, r, &l, blockingFiles(ge.Stderr)); rerr != nil || done {
			return l, false, rerr
		}
		l.Status = LandWaiting
		l.BlockingFiles = blockingFiles(ge.Stderr)
		if lock := lockInError(err); lock != "" {
			l.BlockingFiles = append(l.BlockingFiles, lock)
		}
		l.Detail = strings.TrimSpace(ge.Stderr)
		return l, false, nil
	}
	now, err := r.branchTip(target)
	if err != nil {
		return l, false, err
	}
	if now.String() != l.Commit {
		return l, false, fmt.Errorf("fast-forward in %s left %s at %s, expected %s", l.Checkout, target, now, l.Commit)
	}
	l.Status, l.NewTarget = LandLanded, l.Commit
	return l, false, nil
}

// fastForward runs the person's own `git merge --ff-only <commit>` in a checkout.
func (m *Manager) fastForward(ctx context.Context, checkout, commit string) error {
	step("ff.before-merge")
	_, err := m.git.run(ctx, checkout, runOpts{}, "merge", "--ff-only", "--no-edit", "--no-verify", "--no-stat",
		"--end-of-options", commit)
	if err == nil {
		step("ff.merged")
	}
	return err
}

// targetMoved reports whether the target no longer points at old.
func (m *Manager) targetMoved(r *Repo, target, old string) bool {
	now, err := r.branchTip(target)
	return err == nil && now.String() != old
}

// blockingFiles extracts the tab-indented paths git lists after "would be overwritten by
// merge:" (local changes and untracked files alike).
func blockingFiles(stderr string) []string {
	var files []string
	listing := false
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.Contains(line, "would be overwritten by merge"):
			listing = true
		case listing && strings.HasPrefix(line, "\t"):
			f := strings.TrimSpace(line)
			if uq, err := strconv.Unquote(f); err == nil && strings.HasPrefix(f, `"`) {
				f = uq
			}
			files = append(files, f)
		default:
			listing = false
		}
	}
	return files
}

// runCheck runs the repository's checks on a detached checkout of l.Commit: the check
// checkout of (r, target), reused from one landing to the next. done=true when they failed
// (l says so).
func (m *Manager) runCheck(ctx context.Context, r *Repo, target string, l *Landing, check func(context.Context, string) error) (bool, error) {
	dir, err := m.checkCheckout(ctx, r, target, l.Commit)
	if err != nil {
		return false, fmt.Errorf("checks: %w", err)
	}
	checkErr := check(ctx, dir)
	if checkErr == nil {
		return false, nil
	}
	if ctx.Err() != nil {
		return false, fmt.Errorf("checks: %w", ctx.Err())
	}
	l.Status, l.CheckOutput = LandChecksFailed, checkErr.Error()
	return true, nil
}

// checkCheckout returns DataDir/tmp/check-<repo id>-<target hash> holding exactly commit:
// the checkout the checks of one target run in. It is kept from one landing to the next
// (the landing lock of the target serialises its users, across processes too) and reset
// with `git checkout --force --detach` and `git clean -ffdx`, so what the checks see is what
// a fresh checkout would hold, while tools whose caches are keyed by path (go build among
// them) rebuild only what changed instead of everything in a new directory each time
// (docs/benchmarks.md, "End to end"). When it is missing or cannot be reset it is made
// again with `git worktree add --force --detach`. Either way LFS files are written as
// pointers and then filled like a workspace's (fillChecks), never downloaded.
func (m *Manager) checkCheckout(ctx context.Context, r *Repo, target, commit string) (string, error) {
	dir := filepath.Join(m.scratch, "check-"+strings.TrimPrefix(landKey(r.id, target), "land-"))
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil && plumbing.IsHash(commit) {
		// A full hash of our own merge (checked above), never a name: `git checkout` does not
		// take --end-of-options before it (git 2.39: "--detach does not take a path argument").
		_, err := m.git.run(ctx, dir, runOpts{pointers: true}, "checkout", "--quiet", "--force", "--detach", commit)
		if err == nil {
			_, err = m.git.run(ctx, dir, runOpts{}, "clean", "-ffdxq")
		}
		if err == nil {
			err = m.fillChecks(ctx, r, dir)
		}
		if err == nil {
			return dir, nil
		}
		m.log.Warn("the checks' checkout could not be reset; making it again", "path", dir, "err", err)
	}
	err := m.withStructure(ctx, r, func() error {
		if err := m.discard(ctx, r, dir, "", false); err != nil {
			m.log.Debug("removing the checks' old checkout", "path", dir, "err", err)
		}
		_, err := m.git.run(ctx, r.root, runOpts{pointers: true}, "worktree", "add", "--force", "--detach", "--end-of-options", dir, commit)
		return err
	})
	if err == nil {
		err = m.fillChecks(ctx, r, dir)
	}
	if err != nil {
		return "", fmt.Errorf("checkout for the checks: %w", err)
	}
	return dir, nil
}

// findLanding walks the target's first-parent history (at most 1000 commits) for the commit
// that brought tip in: tip itself (fast-forward) or a merge whose other parent is tip.
func (r *Repo) findLanding(targetTip, tip plumbing.Hash) string {
	found := tip.String()
	_ = r.read(func(gg *git.Repository) error {
		h := targetTip
		for range 1000 {
			if h == tip {
				found = h.String()
				return nil
			}
			c, err := gg.CommitObject(h)
			if err != nil {
				return err
			}
			if len(c.ParentHashes) == 0 {
				return nil
			}
			for _, p := range c.ParentHashes[1:] {
				if p == tip {
					found = h.String()
					return nil
				}
			}
			h = c.ParentHashes[0]
		}
		return nil
	})
	return found
}
