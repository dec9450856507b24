package worktree

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// B16: a killed git process left index.lock behind. It is removed because it is provably
// stale (old and held by no process), and the commit and the landing go through.
func TestB16_StaleIndexLockFromKilledProcessIsRemoved(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t, func(c *Config) { c.StaleLockAge = 300 * time.Millisecond })
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "work.txt", "agent work\n")
	gitDir, err := gitDirOf(ws.Path)
	require.NoError(t, err)
	lock := filepath.Join(gitDir, "index.lock")

	// a process creates the lock the way git does, then is SIGKILLed while holding it
	cmd := helperCommand("hold-lock", helperArgs{LockPath: lock})
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 6)
	_, err = stdout.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "ready\n", string(buf))
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	_, err = os.Stat(lock)
	require.NoError(t, err, "the killed process left its lock")
	_, err = gitTry(ws.Path, "add", "-A")
	require.Error(t, err, "plain git fails on the stale lock")

	start := time.Now()
	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond, "a fresh lock is not removed before it is old")
	require.Equal(t, "agent work", tr.git("show", "main:work.txt"))
	_, err = os.Stat(lock)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// B16: a lock held by a live process is never removed, however old: the commit waits with
// backoff and goes through once the holder finishes, or fails with ErrLockBusy.
func TestB16_LiveIndexLockIsWaitedForNeverRemoved(t *testing.T) {
	tr := newTestRepo(t, nil)
	m := newTestManager(t, func(c *Config) { c.StaleLockAge = 50 * time.Millisecond; c.LockWait = 400 * time.Millisecond })
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "work.txt", "agent work\n")
	gitDir, err := gitDirOf(ws.Path)
	require.NoError(t, err)
	lock := filepath.Join(gitDir, "index.lock")
	holder, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644) // this process holds it
	require.NoError(t, err)
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(lock, old, old))

	_, _, err = m.CommitPending(ctxT(t), ws, "")
	require.ErrorIs(t, err, ErrLockBusy)
	_, err = os.Stat(lock)
	require.NoError(t, err, "a held lock is left in place")

	type committed struct {
		commit  string
		changed bool
		err     error
	}
	// The holder finishing is the point now, not the give-up: the commit waits as long as it
	// takes (on a loaded machine the test may see the wait later than 400 ms into it).
	m.gitLocks.wait = time.Hour
	done := make(chan committed, 1)
	go func() {
		commit, changed, err := m.CommitPending(ctxT(t), ws, "agent summary")
		done <- committed{commit, changed, err}
	}()
	// The holder finishes while the commit waits for it with backoff, as git would.
	testenv.WaitFor(t, "the commit to wait for the held lock", func() bool {
		return len(done) > 0 || testenv.GoroutinesIn("worktree.(*gitLocks).retry(", "[select",
			"created by github.com/mcp-scheduler/mcp-scheduler/worktree.TestB16_LiveIndexLockIsWaitedForNeverRemoved") == 1
	})
	holder.Close()
	os.Remove(lock)
	c, _ := testenv.Receive(t, "the commit once the lock is gone", done)
	commit, changed, err := c.commit, c.changed, c.err
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, commit, tr.tip(ws.Branch))
	require.Contains(t, tr.git("log", "-1", "--format=%B", commit), "agent summary\n\nMission-Id: m\nAttempt: 1")
}

// B16: polling a workspace's status never takes the index lock, so an agent's own git
// commands running at the same time never fail on it.
func TestB16_StatusPollingNeverBreaksConcurrentCommits(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = "x\n"
	}
	tr := newTestRepo(t, files)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	stop := make(chan struct{})
	var polls atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := m.Status(ctxT(t), ws)
			if err != nil {
				t.Errorf("status: %v", err)
				return
			}
			polls.Add(1)
		}
	})
	for i := range 15 { // the agent commits with plain git, no retries
		writeFile(t, ws.Path, fmt.Sprintf("d%d/f%d.txt", i%10, i), fmt.Sprintf("edit %d\n", i))
		gitIn(t, ws.Path, "add", "-A")
		gitIn(t, ws.Path, "commit", "-q", "-m", fmt.Sprintf("agent %d", i))
	}
	close(stop)
	wg.Wait()
	require.Positive(t, polls.Load())
}

// B16 for refs: a stale refs/heads/main.lock left by a killed update does not block landing.
func TestB16_StaleRefLockOnTheTargetIsRemoved(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t, func(c *Config) { c.StaleLockAge = time.Second })
	r := openRepo(t, m, tr.dir)
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	writeFile(t, ws.Path, "x.txt", "x\n")
	lock := filepath.Join(tr.dir, ".git", "refs", "heads", "main.lock")
	require.NoError(t, os.WriteFile(lock, []byte("deadbeef\n"), 0o644))
	old := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(lock, old, old))

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, l.Commit, tr.tip("main"))
}

// B17: a workspace directory deleted by hand (its registration left behind) is re-created at
// the same path on the next Prepare, keeping the branch's commits; cleanup at the end removes
// both the directory and the registration.
func TestB17_DeletedWorkspaceDirectoryIsRecreated(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "kept.txt", "committed\n")
	_, changed, err := m.CommitPending(ctxT(t), ws, "")
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, os.RemoveAll(ws.Path))
	require.Contains(t, tr.git("worktree", "list", "--porcelain"), "prunable")
	_, err = gitTry(tr.dir, "worktree", "add", "-q", ws.Path, "HEAD")
	require.Error(t, err, "plain git refuses: missing but already registered worktree")

	again := prepare(t, m, r, "m", 1)

	require.Equal(t, ws.Path, again.Path)
	require.True(t, again.Resumed)
	require.Equal(t, "committed\n", readFile(t, again.Path, "kept.txt"))
	list := tr.git("worktree", "list", "--porcelain")
	require.Equal(t, 1, strings.Count(list, "worktree "+ws.Path+"\n"))
	require.NotContains(t, list, "prunable")

	require.NoError(t, m.Remove(ctxT(t), again, RemoveOptions{DeleteBranch: true}))
	require.NotContains(t, tr.git("worktree", "list", "--porcelain"), ws.Path)
	_, err = os.Stat(ws.Path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Empty(t, tr.git("branch", "--list", ws.Branch))
}

// B17 without a record: a creation cut short (registration locked "initializing", no record)
// is cleared and done again.
func TestB17_InterruptedCreationIsClearedAndRedone(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	path, err := m.workspacePath(r, "m", 1)
	require.NoError(t, err)
	tr.git("worktree", "add", "-q", "-b", AttemptBranch("m", 1), path, "HEAD")
	admin := strings.TrimPrefix(strings.TrimSpace(readFile(t, path, ".git")), "gitdir: ")
	require.NoError(t, os.WriteFile(filepath.Join(admin, "locked"), []byte("initializing"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(path, "README.md")))

	ws := prepare(t, m, r, "m", 1)

	require.False(t, ws.Resumed)
	require.Equal(t, "hello\n", readFile(t, ws.Path, "README.md"))
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
	require.NotContains(t, tr.git("worktree", "list", "--porcelain"), "locked")
}

// B18: the branch an attempt needs is checked out in another worktree. The result is a clear
// error, and no directory, registration or branch change is left behind.
func TestB18_BranchCheckedOutElsewhereIsAClearErrorWithNoLeftovers(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	elsewhere := filepath.Join(t.TempDir(), "persons-worktree")
	tr.git("worktree", "add", "-q", "-b", AttemptBranch("m", 1), elsewhere, "HEAD")
	writeFile(t, elsewhere, "persons.txt", "person's work\n")
	tr.git("-C", elsewhere, "add", "-A")
	tr.git("-C", elsewhere, "commit", "-q", "-m", "person")
	branchTip := tr.tip(AttemptBranch("m", 1))
	listBefore := tr.git("worktree", "list", "--porcelain")

	_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1})

	require.ErrorIs(t, err, ErrBranchCheckedOut)
	path := filepath.Join(m.Config().DataDir, "worktrees", r.ID(), "m", "a1")
	_, statErr := os.Stat(path)
	require.ErrorIs(t, statErr, os.ErrNotExist)
	require.Equal(t, listBefore, tr.git("worktree", "list", "--porcelain"))
	require.Equal(t, branchTip, tr.tip(AttemptBranch("m", 1)), "the other worktree's branch is untouched")
	require.Equal(t, "person's work\n", readFile(t, elsewhere, "persons.txt"))
}

// B18: a failure right after `git worktree add` (simulated by a git wrapper) or a failed
// post-condition never leaves a half-created worktree behind; the next try succeeds.
func TestB18_HalfCreatedWorktreeNeverStaysBehind(t *testing.T) {
	t.Parallel()
	realGit, err := exec.LookPath("git")
	require.NoError(t, err)
	dir := t.TempDir()
	mode := filepath.Join(dir, "mode")
	wrapper := filepath.Join(dir, "git")
	script := `#!/bin/sh
"` + realGit + `" "$@"; rc=$?
case "$*" in *"worktree add"*) ;; *) exit $rc;; esac
m=$(cat "` + mode + `" 2>/dev/null)
if [ "$m" = fail ]; then exit 1; fi
if [ "$m" = dirty ]; then
  next=0; for a in "$@"; do if [ $next = 1 ]; then echo stray > "$a/stray.txt"; break; fi; [ "$a" = --end-of-options ] && next=1; done
fi
exit $rc
`
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	tr := newTestRepo(t, nil)
	m := newTestManager(t, func(c *Config) { c.GitPath = wrapper })
	r := openRepo(t, m, tr.dir)
	listBefore := tr.git("worktree", "list", "--porcelain")

	for _, failure := range []string{"fail", "dirty"} {
		require.NoError(t, os.WriteFile(mode, []byte(failure), 0o644))
		_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1})
		require.Error(t, err, failure)
		if failure == "dirty" {
			require.Contains(t, err.Error(), "post-condition")
		}
		path := filepath.Join(m.Config().DataDir, "worktrees", r.ID(), "m", "a1")
		_, statErr := os.Stat(path)
		require.ErrorIs(t, statErr, os.ErrNotExist, failure)
		_, statErr = os.Stat(path + ".json")
		require.ErrorIs(t, statErr, os.ErrNotExist, failure)
		require.Equal(t, listBefore, tr.git("worktree", "list", "--porcelain"), failure)
		require.Empty(t, tr.git("branch", "--list", "mcp-scheduler/*"), failure)
	}
	require.NoError(t, os.WriteFile(mode, []byte("ok"), 0o644))
	ws := prepare(t, m, r, "m", 1)
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
}

// B31: ids that could escape the data directory are refused before anything is created, and
// so is a path that a symbolic link would lead outside.
func TestB31_IDsAndPathsThatEscapeAreRefusedAndNothingIsCreated(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	repoDir := filepath.Join(m.Config().DataDir, "worktrees", r.ID())
	before := listTree(t, m.Config().DataDir)

	for _, id := range []string{"../../outside", "/tmp/x", "..", "a/b", strings.Repeat("x", 300), "a\x00b", "", "a b", "é"} {
		_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: id, Attempt: 1})
		require.ErrorIs(t, err, ErrInvalidMissionID, "%q", id)
		_, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: id, Attempt: 1,
			Workspace: Workspace{Path: repoDir, Strategy: StrategyWorktree, Branch: "mcp-scheduler/x/a1"}})
		require.ErrorIs(t, err, ErrInvalidMissionID, "%q", id)
	}
	require.Equal(t, before, listTree(t, m.Config().DataDir))

	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(repoDir, "evil")))
	_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "evil", Attempt: 1})
	require.ErrorIs(t, err, ErrPathEscapes)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing is created through the link")

	for _, p := range []string{outside, filepath.Join(repoDir, "..", "..", "..", "x"), filepath.Join(repoDir, "evil", "a1"), "relative/a1"} {
		ws := Workspace{Path: p, Strategy: StrategyWorktree, Branch: "mcp-scheduler/m/a1", RepoID: r.ID(), MissionID: "m", Attempt: 1}
		_, _, err := m.CommitPending(ctxT(t), ws, "")
		require.ErrorIs(t, err, ErrPathEscapes, p)
		require.ErrorIs(t, m.Remove(ctxT(t), ws, RemoveOptions{Force: true}), ErrPathEscapes, p)
		_, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws})
		require.ErrorIs(t, err, ErrPathEscapes, p)
		_, err = m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 2, Resume: &ws})
		require.ErrorIs(t, err, ErrPathEscapes, p)
	}
	_, err = os.Stat(outside)
	require.NoError(t, err)
}

// B32: branch names and revisions that git could read as options or that break ref rules are
// refused before any git process runs; the spy wrapper proves no git call ever saw them.
func TestB32_RefsThatCouldBeOptionsAreRefusedBeforeGit(t *testing.T) {
	t.Parallel()
	realGit, err := exec.LookPath("git")
	require.NoError(t, err)
	dir := t.TempDir()
	logFile := filepath.Join(dir, "argv.log")
	wrapper := filepath.Join(dir, "git")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >> '"+logFile+"'\nexec '"+realGit+"' \"$@\"\n"), 0o755))
	tr := newTestRepo(t, nil)
	m := newTestManager(t, func(c *Config) { c.GitPath = wrapper })
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	pwn := filepath.Join(dir, "pwn")

	bad := []string{"--output=" + pwn, "-f", "x..y", "a@{1}", "foo.lock", "HEAD", "a b", "ctl\x01x", "@", "refs/heads/main", "a/.hidden", "trailing/", "x~1", "x^", "a:b", "a?", "a*", "a[", `a\b`}
	for _, name := range bad {
		_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "b", Attempt: 1, TargetBranch: name})
		require.ErrorIs(t, err, ErrInvalidRef, "target %q", name)
		_, err = m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "b", Attempt: 1, StartPoint: name})
		require.ErrorIs(t, err, ErrInvalidRef, "start point %q", name)
		_, err = m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "b", Attempt: 1, Strategy: StrategySnapshot, SnapshotCommit: name})
		require.ErrorIs(t, err, ErrInvalidRef, "snapshot %q", name)
		_, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws, TargetBranch: name})
		require.ErrorIs(t, err, ErrInvalidRef, "land target %q", name)
		_, err = m.Diff(ctxT(t), r, name, "main")
		require.ErrorIs(t, err, ErrInvalidRef, "diff %q", name)
		forged := ws
		forged.Branch = name
		_, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: forged})
		require.ErrorIs(t, err, ErrInvalidRef, "workspace branch %q", name)
	}

	_, err = os.Stat(pwn)
	require.ErrorIs(t, err, os.ErrNotExist)
	argv, err := os.ReadFile(logFile)
	require.NoError(t, err)
	for _, name := range bad {
		if name == "HEAD" || name == "@" || name == "-f" {
			continue // also legitimate words of our own git calls
		}
		require.NotContains(t, string(argv), name, "no git process saw %q", name)
	}
	require.NotContains(t, string(argv), " -f ", "no git process saw a bare -f")
	_, err = m.Open(t.TempDir())
	require.ErrorIs(t, err, ErrNotRepository, "a directory outside any repository is refused")
	require.NoError(t, ValidateBranchName("feature/ok-1.2"))
	require.NoError(t, ValidateRevision(ws.BaseCommit[:12]))
}

// listTree lists every path under dir (for "nothing was created" checks).
func listTree(t *testing.T, dir string) []string {
	var paths []string
	require.NoError(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	}))
	return paths
}

// A worktree that another process is adding has an empty commondir for a moment, and `git
// worktree list` then fails ("failed to read .git/worktrees/<name>/commondir: Success"). Under
// load the window is wide enough that a dispatch met it, and the mission failed for good. The
// listing waits out a change in progress; one that never finishes is ErrConcurrentChange, which
// the scheduler retries rather than failing the attempt.
func TestListWorktrees_WaitsOutAWorktreeBeingAdded(t *testing.T) {
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	admin := filepath.Join(tr.dir, ".git", "worktrees", "half")
	require.NoError(t, os.MkdirAll(admin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(admin, "gitdir"), []byte(filepath.Join(t.TempDir(), "half", ".git")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(admin, "commondir"), nil, 0o644))
	_, err := gitTry(tr.dir, "worktree", "list", "--porcelain")
	require.Error(t, err, "git itself fails on the half-added worktree")

	// the other process finishes adding it while we retry
	type opened struct {
		r   *Repo
		err error
	}
	done := make(chan opened, 1)
	go func() {
		r, err := m.Open(tr.dir)
		done <- opened{r, err}
	}()
	testenv.WaitFor(t, "the listing to retry after git failed on the half-added worktree", func() bool {
		return len(done) > 0 || testenv.GoroutinesIn("worktree.(*Manager).listWorktrees(", "[select",
			"created by github.com/mcp-scheduler/mcp-scheduler/worktree.TestListWorktrees_WaitsOutAWorktreeBeingAdded") == 1
	})
	require.NoError(t, os.WriteFile(filepath.Join(admin, "commondir"), []byte("../..\n"), 0o644))
	o, _ := testenv.Receive(t, "the listing to succeed once the worktree is added", done)
	require.NoError(t, o.err)
	r := o.r
	require.NotNil(t, r)

	// a change that never finishes: a clear, retryable error
	require.NoError(t, os.WriteFile(filepath.Join(admin, "commondir"), nil, 0o644))
	_, err = m.listWorktrees(ctxT(t), r)
	require.ErrorIs(t, err, ErrConcurrentChange)
}
