package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// gitLocks deals with git's own lock files (index.lock, HEAD.lock, refs/heads/x.lock) that a
// killed git process left behind (bug case B16). git writes no pid into them, and `git commit
// -a` keeps index.lock (closed) while the person's editor runs, so a lock is removed only when
// it is provably stale (judge):
//
//   - no live process has it open, and
//   - no live git process works in the part of the repository the lock belongs to (lockScope):
//     its working directory, an argument, or its GIT_DIR / GIT_WORK_TREE / GIT_COMMON_DIR lies
//     there; the editor or hook a git waits for is that git's child, so the git itself is seen,
//     and so is an orphaned git of a killed landing, whose working directory is the checkout;
//   - its mtime is at least staleAge old, against tools that are not git.
//
// Where the processes cannot be looked at (no /proc and no lsof) nothing is provably stale and
// no lock is ever removed. A lock that is not stale is waited for with backoff until wait runs
// out, then ErrLockBusy is returned with the lock left in place.
type gitLocks struct {
	staleAge time.Duration
	wait     time.Duration
	now      func() time.Time
	log      *slog.Logger
	// holder names a live process that has path open or a live git process working under one
	// of scope (real paths) ("" when none); known is false where that cannot be determined.
	holder func(path string, scope []string) (who string, known bool)
	// mainRoot returns the main worktree of a common git dir when this process knows it ("" if
	// not): a repository whose git dir lies elsewhere (--separate-git-dir).
	mainRoot func(commonDir string) string
}

// lockExists matches git's message for a lock file that already exists, for the index and
// for refs alike: "Unable to create '/r/.git/index.lock': File exists."
var lockExists = regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`)

// lockInError returns the lock path named in a git failure, or "".
func lockInError(err error) string {
	if m := lockExists.FindStringSubmatch(stderrOf(err)); m != nil {
		return m[1]
	}
	return ""
}

// retry runs fn until it succeeds, fails for a reason other than an existing lock file, or
// the lock stays held longer than l.wait. Stale locks are removed on the way; a lock that is
// waited for is logged once with the reason it is not stale. fn must be safe to repeat after
// a lock failure (git checks its lock before changing anything).
func (l *gitLocks) retry(ctx context.Context, fn func() error) error {
	deadline := l.now().Add(l.wait)
	backoff := 20 * time.Millisecond
	logged := map[string]bool{}
	for removals := 0; ; {
		err := fn()
		lock := lockInError(err)
		if lock == "" {
			return err
		}
		removed, why, rmErr := l.removeIfStale(lock)
		if rmErr != nil {
			return fmt.Errorf("%w (%v)", err, rmErr)
		}
		if removed && removals < 100 {
			removals++
			continue
		}
		if l.now().After(deadline) {
			return fmt.Errorf("%w: %s still held after %s (%s): %w", ErrLockBusy, lock, l.wait, why, err)
		}
		if !logged[lock+why] {
			logged[lock+why] = true
			l.log.Info("waiting for a git lock", "path", lock, "reason", why, "wait_s", l.wait.Seconds())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", lock, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Second)
	}
}

// lockGone is judge's reason for a lock that no longer exists.
const lockGone = "gone"

// verdict is judge's answer about one lock file.
type verdict struct {
	stale bool
	// why says what proves it stale, or what keeps it ("held by git pid 12 (git commit -a)").
	why string
	// young is how long until the lock is old enough, when its age is all that keeps it.
	young time.Duration
	info  fs.FileInfo
}

// judge decides whether the lock file at path is provably stale (see gitLocks). A lock that
// no longer exists is stale with info nil.
func (l *gitLocks) judge(path string) (verdict, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return verdict{stale: true, why: lockGone}, nil
	}
	if err != nil {
		return verdict{}, fmt.Errorf("stat lock %s: %w", path, err)
	}
	scope := lockScope(path, l.mainRoot)
	who, known := l.holder(path, scope)
	switch {
	case !known:
		return verdict{why: "no way to see the processes on this system (no /proc, no lsof): never removed", info: st}, nil
	case who != "":
		return verdict{why: "held by " + who, info: st}, nil
	}
	if age := l.now().Sub(st.ModTime()); age < l.staleAge {
		return verdict{why: fmt.Sprintf("%.1fs old, younger than %s", age.Seconds(), l.staleAge), young: l.staleAge - age, info: st}, nil
	}
	return verdict{stale: true, why: fmt.Sprintf("no live process has it open and no live git works in %s",
		strings.Join(scope, ", ")), info: st}, nil
}

// removeIfStale deletes path if it is provably stale and reports whether it did (a lock that
// vanished meanwhile counts as removed), with the reason.
func (l *gitLocks) removeIfStale(path string) (bool, string, error) {
	v, err := l.judge(path)
	if err != nil || !v.stale {
		return false, v.why, err
	}
	if v.info == nil {
		return true, v.why, nil
	}
	if err := removeSame(path, v.info); err != nil {
		return false, v.why, err
	}
	l.log.Warn("removed stale git lock", "path", path, "age_s", l.now().Sub(v.info.ModTime()).Seconds(), "reason", v.why)
	return true, v.why, nil
}

// removeSame removes path only if it is still the file judged (info): the lock is renamed
// aside atomically first, and when what was renamed is a new lock that a git created in the
// meantime, it is linked back (link fails rather than replace a newer one).
func removeSame(path string, info fs.FileInfo) error {
	// Named like a lock, which git skips when it lists refs, so that a crash right here
	// leaves no file that reads as a branch.
	aside := strings.TrimSuffix(path, ".lock") + fmt.Sprintf(".stale-%d.lock", os.Getpid())
	if err := os.Rename(path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("remove stale lock %s: %w", path, err)
	}
	now, err := os.Lstat(aside)
	if err == nil && !os.SameFile(now, info) {
		if err := os.Link(aside, path); err != nil {
			return fmt.Errorf("put back lock %s created while it was judged (left at %s): %w", path, aside, err)
		}
	}
	if err := os.Remove(aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale lock %s: %w", aside, err)
	}
	return nil
}

// lockScope returns the real paths a git process must work under to possibly own the lock
// file at path: for a lock of one worktree (its index, HEAD, ORIG_HEAD and other pseudo refs)
// that worktree's checkout and git dir; for anything shared (refs, packed-refs, config) the
// common dir and every checkout of the repository. A path in no git dir scopes to its own
// directory.
func lockScope(path string, mainRoot func(string) string) []string {
	gitDir := enclosingGitDir(filepath.Dir(path))
	if gitDir == "" {
		return []string{realOr(filepath.Dir(path))}
	}
	commonDir := gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		commonDir = strings.TrimSpace(string(data))
		if !filepath.IsAbs(commonDir) {
			commonDir = filepath.Join(gitDir, commonDir)
		}
	}
	// Everything in a linked worktree's own git dir is that worktree's; in the common dir, the
	// main worktree's index and pseudo refs are.
	base := filepath.Base(path)
	perWorktree := gitDir != commonDir ||
		(filepath.Dir(path) == gitDir && (base == "index.lock" || strings.HasSuffix(base, "HEAD.lock")))
	scope := []string{realOr(gitDir)}
	if perWorktree {
		if co := checkoutOfGitDir(gitDir, commonDir, mainRoot); co != "" {
			scope = append(scope, co)
		}
		return scope
	}
	scope = []string{realOr(commonDir)}
	if co := checkoutOfGitDir(commonDir, commonDir, mainRoot); co != "" {
		scope = append(scope, co)
	}
	admins, _ := os.ReadDir(filepath.Join(commonDir, "worktrees"))
	for _, a := range admins {
		dir := filepath.Join(commonDir, "worktrees", a.Name())
		scope = append(scope, realOr(dir))
		if co := checkoutOfGitDir(dir, commonDir, mainRoot); co != "" {
			scope = append(scope, co)
		}
	}
	return scope
}

// enclosingGitDir walks up from dir to the git directory holding it (a directory with HEAD
// and either objects/ or a commondir file), or "".
func enclosingGitDir(dir string) string {
	for range 12 {
		if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "objects")); err == nil {
				return dir
			}
			if _, err := os.Stat(filepath.Join(dir, "commondir")); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// checkoutOfGitDir returns the real path of the checkout a git dir belongs to: a linked
// worktree's from its gitdir file, the main worktree as the parent of a ".git" common dir or
// as mainRoot knows it; "" when none is known.
func checkoutOfGitDir(gitDir, commonDir string, mainRoot func(string) string) string {
	if gitDir != commonDir {
		data, err := os.ReadFile(filepath.Join(gitDir, "gitdir"))
		if err != nil {
			return ""
		}
		return realOr(filepath.Dir(strings.TrimSpace(string(data))))
	}
	if mainRoot != nil {
		if root := mainRoot(realOr(commonDir)); root != "" {
			return root
		}
	}
	if filepath.Base(commonDir) == ".git" {
		return realOr(filepath.Dir(commonDir))
	}
	return ""
}

// realOr resolves symlinks in p, or returns p cleaned when it cannot.
func realOr(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// under reports whether p is dir or lies inside it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// lockHolder is the default holder check: it resolves path and asks the platform.
func lockHolder(path string, scope []string) (string, bool) {
	return liveHolder(realOr(path), scope)
}
