package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// retryOverIdenticalFiles handles a fast-forward that git refused because files in the
// checkout would be overwritten, when every one of those files already holds exactly the
// content the landing brings (as filtered by git: line endings, attributes), or the start of
// it (a write cut short: git creates a file, then writes it). That is what a fast-forward
// killed half-way leaves behind (files written, index not), and it also covers a person who
// copied the same change by hand; nothing of theirs is lost, as every byte of such a file is
// in what lands. Such files are set aside under DataDir/tmp, the
// fast-forward is run again, and the copies are dropped once it succeeded, or put back if it
// did not; any of them the successful fast-forward did not write (a concurrent git had
// completed it, checkOutMissing) are written from the landed commit first. A file whose
// content differs is never touched: the landing then waits.
// done=true when the landing completed (l updated).
func (m *Manager) retryOverIdenticalFiles(ctx context.Context, r *Repo, l *Landing, files []string) (bool, error) {
	if len(files) == 0 || !m.allIncoming(ctx, r, l.Checkout, l.Commit, files) {
		return false, nil
	}
	aside, err := os.MkdirTemp(m.scratch, "aside-")
	if err != nil {
		return false, err
	}
	moved, err := moveFiles(l.Checkout, aside, files)
	if err != nil {
		return false, errors.Join(err, restoreFiles(aside, l.Checkout, moved))
	}
	step("ff.files-set-aside")
	if err := m.fastForward(ctx, l.Checkout, l.Commit); err != nil {
		if rerr := restoreFiles(aside, l.Checkout, moved); rerr != nil {
			return false, fmt.Errorf("put back files set aside in %s: %w", aside, rerr)
		}
		_ = os.RemoveAll(aside)
		return false, nil
	}
	if err := m.checkOutMissing(ctx, l.Checkout, l.Commit, moved); err != nil {
		if rerr := restoreFiles(aside, l.Checkout, missingFiles(l.Checkout, moved)); rerr != nil {
			err = errors.Join(err, fmt.Errorf("put back files set aside in %s: %w", aside, rerr))
		}
		return false, fmt.Errorf("write the landed files set aside in %s: %w", l.Checkout, err)
	}
	_ = os.RemoveAll(aside)
	m.log.Warn("completed an interrupted fast-forward: files in the way already held the landed content",
		"checkout", l.Checkout, "files", len(moved))
	l.Status, l.NewTarget = LandLanded, l.Commit
	return true, nil
}

// checkOutMissing writes from commit those of files (set aside, all in commit) that are missing
// from the checkout after a fast-forward succeeded. A git merge that read the index before a
// concurrent one (the orphan of a killed landing) wrote it sees that git's files as untracked
// and refuses; once they are set aside, the second run finds the fast-forward done and writes
// nothing, so without this they would stay deleted in the person's checkout.
func (m *Manager) checkOutMissing(ctx context.Context, checkout, commit string, files []string) error {
	missing := missingFiles(checkout, files)
	if len(missing) == 0 {
		return nil
	}
	args := []string{"checkout", "--quiet", commit, "--"}
	for _, f := range missing {
		args = append(args, ":(literal)"+f)
	}
	m.log.Warn("a concurrent git completed the fast-forward; writing the files it found in the way",
		"checkout", checkout, "files", len(missing))
	return m.gitLocks.retry(ctx, func() error {
		_, err := m.git.run(ctx, checkout, runOpts{}, args...)
		return err
	})
}

// missingFiles returns the files that do not exist (not even as a symlink) under dir.
func missingFiles(dir string, files []string) []string {
	var missing []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f)); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, f)
		}
	}
	return missing
}

// allIncoming reports whether every file's content in the checkout, hashed the way git would
// store it, equals its blob in commit, or is a prefix of that blob's bytes (cutShort).
func (m *Manager) allIncoming(ctx context.Context, r *Repo, checkout, commit string, files []string) bool {
	for _, f := range files {
		if f == "" || filepath.IsAbs(f) || hasDotDot(f) || hasControl(f) {
			return false
		}
	}
	worktree, err := m.git.run(ctx, checkout, runOpts{readOnly: true, stdin: []byte(strings.Join(files, "\n") + "\n")},
		"hash-object", "--stdin-paths")
	if err != nil {
		return false
	}
	specs := make([]string, len(files))
	for i, f := range files {
		specs[i] = commit + ":" + f
	}
	incoming, err := m.git.run(ctx, r.root, runOpts{readOnly: true, stdin: []byte(strings.Join(specs, "\n") + "\n")},
		"cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return false
	}
	a, b := strings.Fields(string(worktree)), strings.Fields(string(incoming))
	if len(a) != len(files) || len(b) != len(files) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !r.cutShort(filepath.Join(checkout, files[i]), b[i]) {
			return false
		}
	}
	return true
}

// cutShort reports whether the regular file at path holds the first bytes of the blob (and
// fewer than all of them): what git leaves when it is killed while writing the file.
func (r *Repo) cutShort(path, blob string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || !plumbing.IsHash(blob) {
		return false
	}
	have, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	prefix := false
	_ = r.read(func(gg *git.Repository) error {
		b, err := gg.BlobObject(plumbing.NewHash(blob))
		if err != nil || b.Size <= int64(len(have)) {
			return err
		}
		rd, err := b.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		head := make([]byte, len(have))
		if _, err := io.ReadFull(rd, head); err != nil {
			return err
		}
		prefix = bytes.Equal(head, have)
		return nil
	})
	return prefix
}

func moveFiles(from, to string, files []string) ([]string, error) {
	var moved []string
	for _, f := range files {
		dst := filepath.Join(to, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return moved, err
		}
		if err := os.Rename(filepath.Join(from, f), dst); err != nil {
			return moved, err
		}
		moved = append(moved, f)
	}
	return moved, nil
}

func restoreFiles(from, to string, files []string) error {
	var errs []error
	for _, f := range files {
		if err := os.Rename(filepath.Join(from, f), filepath.Join(to, f)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// clearTargetLocks removes the provably stale git locks (gitLocks.judge) that a killed git
// left in the checkout holding target: its HEAD.lock, index.lock and ORIG_HEAD.lock, and the
// target's ref lock. A landing killed with its `git merge --ff-only` just after the branch
// moved leaves such a lock and nothing of the landing is left to do, so no git of the next
// landing fails on it and removes it, while the person's next `git commit` would fail. The
// landing lock is held, so no landing of any scheduler process writes there meanwhile. A lock
// whose age is all that keeps it is waited for (at most StaleLockAge); one a live process
// holds is left alone and logged with its holder. It returns the paths removed, for the
// landing's record.
func (m *Manager) clearTargetLocks(ctx context.Context, r *Repo, target string) ([]string, error) {
	holders, err := m.checkoutsHolding(r, target)
	if err != nil || len(holders) == 0 {
		return nil, err
	}
	gitDir, err := gitDirOf(holders[0])
	if err != nil {
		return nil, err
	}
	candidates := []string{filepath.Join(gitDir, "HEAD.lock"), filepath.Join(gitDir, "index.lock"),
		filepath.Join(gitDir, "ORIG_HEAD.lock"), filepath.Join(r.commonDir, "refs", "heads", filepath.FromSlash(target)+".lock")}
	var cleared []string
	for _, lock := range candidates {
		if _, err := os.Lstat(lock); err != nil {
			continue
		}
		removed, err := m.clearLock(ctx, lock, holders[0])
		if err != nil {
			return cleared, err
		}
		if removed {
			cleared = append(cleared, lock)
		}
	}
	return cleared, nil
}

// clearLock removes one lock of the checkout holding the target when it is provably stale,
// waiting for it to become old enough when its age is all that keeps it. A lock a live
// process holds is looked at again a few times over about a second (a short git of another
// landing may be working in the repository), then left alone.
func (m *Manager) clearLock(ctx context.Context, lock, checkout string) (bool, error) {
	pause := 50 * time.Millisecond
	for tries := 0; ; tries++ {
		v, err := m.gitLocks.judge(lock)
		if err != nil {
			return false, err
		}
		if v.info == nil {
			return false, nil // gone: the git holding it finished
		}
		if v.stale && tries < 20 {
			removed, why, err := m.gitLocks.removeIfStale(lock)
			if err != nil || removed {
				return removed && why != lockGone, err
			}
			continue // judged again inside: a git started meanwhile
		}
		wait := pause
		if v.young > 0 {
			wait = v.young
			m.log.Info("waiting for a git lock in the checkout holding the target to be provably stale",
				"path", lock, "checkout", checkout, "wait_s", wait.Seconds())
		} else if tries >= 5 || v.stale {
			m.log.Info("left a git lock in the checkout holding the target", "path", lock, "checkout", checkout, "reason", v.why)
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(wait):
		}
		pause *= 2
	}
}

// mainRootOf returns the main worktree of an opened repository whose common dir is commonDir
// (real path), or "".
func (m *Manager) mainRootOf(commonDir string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.repos {
		if r.commonDir == commonDir {
			return r.mainRoot
		}
	}
	return ""
}

// refLocksFree fails, the way git would, when a lock file that `git merge --ff-only` takes
// only after it has written the checkout's files and index exists in checkout: HEAD.lock,
// ORIG_HEAD.lock or the target's ref lock. git would otherwise update the person's files and
// index and then fail to move HEAD, leaving the incoming changes staged in their checkout.
// The error carries git's own "Unable to create '<lock>': File exists." so that
// gitLocks.retry removes a stale lock or waits for a held one before the merge starts.
func refLocksFree(checkout, commonDir, target string) error {
	gitDir, err := gitDirOf(checkout)
	if err != nil {
		return err
	}
	for _, lock := range []string{filepath.Join(gitDir, "HEAD.lock"), filepath.Join(gitDir, "ORIG_HEAD.lock"),
		filepath.Join(commonDir, "refs", "heads", filepath.FromSlash(target)+".lock")} {
		if _, err := os.Lstat(lock); err == nil {
			return &GitError{Args: []string{"merge", "--ff-only"}, Dir: checkout, ExitCode: -1, Err: fs.ErrExist,
				Stderr: fmt.Sprintf("fatal: Unable to create '%s': File exists (seen before running git, which would write the files and the index and then fail on it).", lock)}
		}
	}
	return nil
}
