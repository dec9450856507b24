package worktree

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A landing process SIGKILLed with its process group just after its `git merge --ff-only`
// moved the target in the person's checkout, while a git of that group held one of the
// checkout's locks: the lock is left behind, and nothing of the landing is left to do, so no
// git of the next landing fails on it. The next landing must remove it (it is provably stale:
// no process has it open, no git works in the checkout), say so in its result and its log,
// and the person's own next `git commit` (or `git reset`, for ORIG_HEAD) must succeed.
func TestLand_GitKilledHoldingALockAfterTheTargetMovedThenThePersonCommits(t *testing.T) {
	t.Parallel()
	for _, lock := range []string{"HEAD", "index", "ORIG_HEAD", "refs/heads/main"} {
		t.Run(strings.ReplaceAll(lock, "/", "_"), func(t *testing.T) {
			tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
			dataDir := t.TempDir()
			logs := &syncBuffer{}
			m := newTestManager(t, func(c *Config) {
				c.DataDir, c.StaleLockAge = dataDir, 200*time.Millisecond
				c.Logger = slog.New(slog.NewTextHandler(logs, nil))
			})
			r := openRepo(t, m, tr.dir)
			ws := prepare(t, m, r, "killed", 1)
			writeFile(t, ws.Path, "work.txt", "work\n")

			cmd := helperCommand("land", helperArgs{DataDir: dataDir, RepoDir: tr.dir, Workspace: ws,
				KillAt: "ff.merged", HoldLock: lock})
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the helper was killed: %s", out)
			require.Contains(t, err.Error(), "killed", "%s", out)
			lockPath := filepath.Join(tr.dir, ".git", filepath.FromSlash(lock)+".lock")
			require.FileExists(t, lockPath, "the killed git left its lock")
			require.Equal(t, "work", tr.git("show", "main:work.txt"), "the target moved before the kill")
			// what the person runs next: a commit, or (ORIG_HEAD) a merge of a commit ahead
			personsGit := []string{"commit", "-q", "--allow-empty", "-m", "person"}
			if lock == "ORIG_HEAD" {
				ahead := tr.git("commit-tree", "-p", "HEAD", "-m", "ahead", "HEAD^{tree}")
				personsGit = []string{"merge", "-q", "--ff-only", ahead}
			}
			_, err = gitTry(tr.dir, personsGit...)
			require.Error(t, err, "the person's git fails on the stale lock")

			l := land(t, m, r, ws)
			require.Equal(t, LandAlreadyLanded, l.Status, "%+v", l)
			require.Contains(t, l.ClearedLocks, lockPath) // a ref's transaction also locks HEAD, which points at it
			for _, p := range l.ClearedLocks {
				require.NoFileExists(t, p)
			}
			require.Contains(t, logs.String(), "removed stale git lock")
			require.Contains(t, logs.String(), lockPath)

			gitIn(t, tr.dir, personsGit...)
			tr.write("person.txt", "person\n")
			tr.commitAll("the person's next commit")
			require.Empty(t, tr.git("status", "--porcelain"))
			fsckClean(t, tr.dir)
		})
	}
}

// A lock of the person's checkout that a live git holds is never removed, however old, even
// though no process has it open: `git commit -a` keeps index.lock closed while its editor
// runs, and a prepared ref transaction keeps HEAD.lock. The landing waits for it, then
// reports waiting_for_clean_checkout with the lock among the blocking files and touches
// neither the lock nor the person's files or index; once that git is done the person's
// commit is there and the next landing lands.
func TestLand_LockOfALiveGitInThePersonsCheckoutIsLeftAlone(t *testing.T) {
	t.Parallel()
	for _, lock := range []string{"index", "HEAD"} {
		t.Run(lock, func(t *testing.T) {
			tr := newTestRepo(t, map[string]string{"base.txt": "base\n"})
			logs := &syncBuffer{}
			m := newTestManager(t, func(c *Config) {
				c.StaleLockAge, c.LockWait = 50*time.Millisecond, 600*time.Millisecond
				c.Logger = slog.New(slog.NewTextHandler(logs, nil))
			})
			r := openRepo(t, m, tr.dir)
			ws := prepare(t, m, r, "live", 1)
			writeFile(t, ws.Path, "work.txt", "work\n")
			tr.write("base.txt", "the person's edit\n") // what `git commit -a` commits

			holder, release, err := holdingGit(tr.dir, lock, filepath.Join(t.TempDir(), "proceed"))
			require.NoError(t, err)
			var once sync.Once
			var waitErr error
			wait := func() error { once.Do(func() { waitErr = holder.Wait() }); return waitErr }
			t.Cleanup(func() {
				release()
				_ = holder.Process.Kill()
				_ = wait()
			})
			lockPath := filepath.Join(tr.dir, ".git", lock+".lock")
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(lockPath, old, old))

			l := land(t, m, r, ws)
			require.Equal(t, LandWaiting, l.Status, "%+v", l)
			require.Contains(t, l.BlockingFiles, lockPath)
			require.Empty(t, l.ClearedLocks)
			require.FileExists(t, lockPath, "a lock a live git holds stays")
			require.Contains(t, logs.String(), "held by git pid")
			require.NotContains(t, logs.String(), "removed stale git lock")
			status, err := gitTry(tr.dir, "status", "--porcelain", "--untracked-files=no")
			require.NoError(t, err, status)
			require.Equal(t, " M base.txt\n", status, "the person's files and index are as they left them")

			release() // the editor closes, or the transaction's input ends
			if lock == "index" {
				require.NoError(t, wait(), "the person's git commit -a succeeds")
				require.Equal(t, "person commit", tr.git("log", "-1", "--format=%s", "main"))
			} else {
				_ = wait()
			}
			require.NoFileExists(t, lockPath, "that git removed its own lock")
			l = land(t, m, r, ws)
			require.Equal(t, LandLanded, l.Status, "%+v", l)
			require.Equal(t, "work", tr.git("show", "main:work.txt"))
			require.Equal(t, tr.tip("main"), tr.git("rev-parse", "HEAD"))
		})
	}
}

func TestLockScope(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	linked := filepath.Join(t.TempDir(), "linked")
	tr.git("worktree", "add", "-q", "-b", "side", linked)
	root, linkedReal := realOr(tr.dir), realOr(linked)
	common := filepath.Join(root, ".git")
	admin := filepath.Join(common, "worktrees", "linked")
	for _, c := range []struct {
		lock string
		want []string
	}{
		{filepath.Join(common, "HEAD.lock"), []string{common, root}},
		{filepath.Join(common, "index.lock"), []string{common, root}},
		{filepath.Join(common, "ORIG_HEAD.lock"), []string{common, root}},
		{filepath.Join(admin, "index.lock"), []string{admin, linkedReal}},
		{filepath.Join(common, "refs", "heads", "main.lock"), []string{common, root, admin, linkedReal}},
		{filepath.Join(common, "packed-refs.lock"), []string{common, root, admin, linkedReal}},
	} {
		require.Equal(t, c.want, lockScope(c.lock, nil), c.lock)
	}
	require.True(t, under(root+"/sub", root))
	require.False(t, under(root+"x", root))
	require.Equal(t, fmt.Sprint([]string{"/nowhere"}), fmt.Sprint(lockScope("/nowhere/x.lock", nil)))
}

// BenchmarkClearTargetLocks measures what looking for stale locks adds to every landing when
// there are none (the usual case: a lookup of the checkout holding the target and four
// lstat calls), against one git process (`git rev-parse HEAD`) measured in the same run.
func BenchmarkClearTargetLocks(b *testing.B) {
	tr := newTestRepo(b, nil)
	m := newTestManager(b)
	r := openRepo(b, m, tr.dir)
	ctx := ctxT(b)
	b.Run("clear_no_locks", func(b *testing.B) {
		for b.Loop() {
			if cleared, err := m.clearTargetLocks(ctx, r, "main"); err != nil || len(cleared) > 0 {
				b.Fatal(cleared, err)
			}
		}
	})
	b.Run("reference_one_git_process", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.git.run(ctx, r.root, runOpts{readOnly: true}, "rev-parse", "HEAD"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
