package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is an injectable clock for retention rules.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

func TestCleanup_RemovesExpiredAndKeepsKeptDirtyAndRecent(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	clock := &fakeClock{now: time.Now()}
	m := newTestManager(t, func(c *Config) { c.Now = clock.Now; c.Retention = time.Hour })
	r := openRepo(t, m, tr.dir)
	landed := prepare(t, m, r, "landed", 1)
	writeFile(t, landed.Path, "l.txt", "l\n")
	require.Equal(t, LandLanded, land(t, m, r, landed).Status)
	failed := prepare(t, m, r, "failed", 1)
	writeFile(t, failed.Path, "f.txt", "evidence\n")
	dirty := prepare(t, m, r, "dirty", 1)
	writeFile(t, dirty.Path, "d.txt", "uncommitted\n")
	snap, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "review", Attempt: 1, Strategy: StrategySnapshot})
	require.NoError(t, err)
	clock.Add(2 * time.Hour)
	recent := prepare(t, m, r, "recent", 1)
	keep := func(mission string, _ int) bool { return mission == "failed" }

	dry, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: keep, DryRun: true})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"landed", "review"}, missions(dry.Removed))
	for _, ws := range []Workspace{landed, snap} {
		_, err := os.Stat(ws.Path)
		require.NoError(t, err, "a dry run changes nothing")
	}

	rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: keep})
	require.NoError(t, err)

	require.ElementsMatch(t, []string{"landed", "review"}, missions(rep.Removed))
	require.Equal(t, map[string]string{"failed": "keep", "dirty": "dirty", "recent": "recent"}, reasons(rep.Kept))
	require.Positive(t, rep.FreedBytes)
	require.Positive(t, rep.DiskBytes)
	require.Equal(t, dry.FreedBytes, rep.FreedBytes)
	for _, ws := range []Workspace{landed, snap} {
		_, err := os.Stat(ws.Path)
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	require.Empty(t, tr.git("branch", "--list", landed.Branch))
	require.NotEmpty(t, tr.git("branch", "--list", failed.Branch))
	require.Equal(t, "uncommitted\n", readFile(t, dirty.Path, "d.txt"))
	_, err = os.Stat(recent.Path)
	require.NoError(t, err)
	require.NotContains(t, tr.git("worktree", "list"), landed.Path)

	rep, err = m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: keep, RemoveDirty: true})
	require.NoError(t, err)
	require.Equal(t, []string{"dirty"}, missions(rep.Removed), "told to, cleanup removes a dirty one")
}

func TestCleanup_WithoutKeepKeepsUnlandedWork(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	clock := &fakeClock{now: time.Now()}
	m := newTestManager(t, func(c *Config) { c.Now = clock.Now })
	r := openRepo(t, m, tr.dir)
	landed := prepare(t, m, r, "landed", 1)
	writeFile(t, landed.Path, "l.txt", "l\n")
	require.Equal(t, LandLanded, land(t, m, r, landed).Status)
	unlanded := prepare(t, m, r, "unlanded", 1)
	writeFile(t, unlanded.Path, "u.txt", "u\n")
	_, _, err := m.CommitPending(ctxT(t), unlanded, "")
	require.NoError(t, err)
	untouched := prepare(t, m, r, "untouched", 1)
	clock.Add(48 * time.Hour)

	rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, OlderThan: time.Hour})
	require.NoError(t, err)

	require.ElementsMatch(t, []string{"landed", "untouched"}, missions(rep.Removed))
	require.Equal(t, map[string]string{"unlanded": "unlanded"}, reasons(rep.Kept))
	_, err = os.Stat(untouched.Path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestCleanup_PrunesOnlyOurStaleRegistrationsAndOrphanBranches(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	clock := &fakeClock{now: time.Now()}
	m := newTestManager(t, func(c *Config) { c.Now = clock.Now })
	r := openRepo(t, m, tr.dir)
	gone := prepare(t, m, r, "gone", 1)
	require.NoError(t, os.RemoveAll(gone.Path))
	require.NoError(t, os.Remove(gone.Path+".json")) // record lost too: only the branch and registration remain
	persons := filepath.Join(t.TempDir(), "on-a-usb-stick")
	tr.git("worktree", "add", "-q", "-b", "person", persons)
	require.NoError(t, os.RemoveAll(persons))
	clock.Add(48 * time.Hour)

	rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: func(string, int) bool { return false }})
	require.NoError(t, err)

	require.Equal(t, []string{gone.Path}, rep.Pruned)
	list := tr.git("worktree", "list", "--porcelain")
	require.NotContains(t, list, gone.Path)
	require.Contains(t, list, persons, "the person's own registration is never pruned")
	require.Equal(t, []CleanupEntry{{MissionID: "gone", Attempt: 1, Branch: gone.Branch, Reason: "expired"}}, rep.Removed)
	require.Empty(t, tr.git("branch", "--list", gone.Branch))
	require.NotEmpty(t, tr.git("branch", "--list", "person"))
}

func TestCleanup_RemovesInterruptedCreationsAndDrainsPool(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t, func(c *Config) { c.WarmPool = 1 })
	r := openRepo(t, m, tr.dir)
	require.NoError(t, m.FillPool(ctxT(t), r))
	half := filepath.Join(m.Config().DataDir, "worktrees", r.ID(), "m", "a1")
	require.NoError(t, os.MkdirAll(half, 0o700))
	writeFile(t, half, "partial.txt", "x")
	require.NoError(t, m.Close()) // no refill racing the drain

	m2 := newTestManager(t, func(c *Config) { c.DataDir = m.Config().DataDir })
	r2 := openRepo(t, m2, tr.dir)
	rep, err := m2.Cleanup(ctxT(t), CleanupRequest{Repo: r2, DrainPool: true, Keep: func(string, int) bool { return true }})
	require.NoError(t, err)

	require.Equal(t, map[string]string{"m": "incomplete", "": "pool"}, reasons(rep.Removed))
	_, err = os.Stat(half)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, 1, len(splitLines(tr.git("worktree", "list", "--porcelain"), "worktree ")))
}

func TestRemove_RefusesDirtyWorkspaceUnlessForced(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "x.txt", "unsaved\n")

	require.ErrorIs(t, m.Remove(ctxT(t), ws, RemoveOptions{}), ErrWorkspaceDirty)
	require.Equal(t, "unsaved\n", readFile(t, ws.Path, "x.txt"))
	require.NoError(t, m.Remove(ctxT(t), ws, RemoveOptions{Force: true}))
	_, err := os.Stat(ws.Path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NotEmpty(t, tr.git("branch", "--list", ws.Branch), "the branch stays unless asked")
	require.NoError(t, m.Remove(ctxT(t), ws, RemoveOptions{DeleteBranch: true}), "removing twice is fine")
	require.Empty(t, tr.git("branch", "--list", ws.Branch))
}

func TestRemove_FindsRepositoryOfAWorkspaceFromAnotherProcess(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	dataDir := t.TempDir()
	m1 := newTestManager(t, func(c *Config) { c.DataDir = dataDir })
	ws := prepare(t, m1, openRepo(t, m1, tr.dir), "m", 1)
	m2 := newTestManager(t, func(c *Config) { c.DataDir = dataDir })

	roots, err := m2.KnownRepositories()
	require.NoError(t, err)
	real, _ := filepath.EvalSymlinks(tr.dir)
	require.Equal(t, []string{real}, roots)
	require.NoError(t, m2.Remove(ctxT(t), ws, RemoveOptions{DeleteBranch: true}))
	require.NotContains(t, tr.git("worktree", "list"), ws.Path)
}

func missions(entries []CleanupEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.MissionID)
	}
	return out
}

func reasons(entries []CleanupEntry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		out[e.MissionID] = e.Reason
	}
	return out
}

func splitLines(s, prefix string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return out
}
