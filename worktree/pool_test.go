package worktree

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

func TestWarmPool_PrepareClaimsAPreparedCheckoutAndRefills(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", ".gitignore": ".env\n"})
	tr.write(".env", "K=V\n")
	m := newTestManager(t, func(c *Config) { c.WarmPool = 2; c.CopyIgnored = []string{".env"} })
	r := openRepo(t, m, tr.dir)
	require.NoError(t, m.FillPool(ctxT(t), r))
	require.Len(t, readyPool(t, m, r), 2)

	ws := prepare(t, m, r, "m", 1)

	require.True(t, ws.FromPool)
	require.Equal(t, filepath.Join(m.Config().DataDir, "worktrees", r.ID(), "m", "a1"), ws.Path)
	require.Equal(t, ws.Branch, gitIn(t, ws.Path, "branch", "--show-current"))
	require.Equal(t, tr.tip("main"), gitIn(t, ws.Path, "rev-parse", "HEAD"))
	require.Equal(t, "K=V\n", readFile(t, ws.Path, ".env"))
	testenv.WaitFor(t, "the pool to be refilled in the background", func() bool { return len(readyPool(t, m, r)) == 2 })
	writeFile(t, ws.Path, "b.txt", "b\n")
	require.Equal(t, LandLanded, land(t, m, r, ws).Status)
}

func TestWarmPool_OldPooledCheckoutIsSwitchedToTheCurrentBase(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "old\n", "gone.txt": "x\n"})
	m := newTestManager(t, func(c *Config) { c.WarmPool = 1 })
	r := openRepo(t, m, tr.dir)
	require.NoError(t, m.FillPool(ctxT(t), r))
	tr.write("a.txt", "new\n")
	require.NoError(t, os.Remove(filepath.Join(tr.dir, "gone.txt")))
	tr.commitAll("move on")

	ws := prepare(t, m, r, "m", 1)

	require.True(t, ws.FromPool)
	require.Equal(t, tr.tip("main"), ws.BaseCommit)
	require.Equal(t, "new\n", readFile(t, ws.Path, "a.txt"))
	_, err := os.Stat(filepath.Join(ws.Path, "gone.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
}

func TestWarmPool_BrokenPoolEntryFallsBackToAFreshWorktree(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t, func(c *Config) { c.WarmPool = 1 })
	r := openRepo(t, m, tr.dir)
	require.NoError(t, m.FillPool(ctxT(t), r))
	entry := readyPool(t, m, r)[0]
	writeFile(t, entry, "a.txt", "someone wrote into the pool\n") // a conflicting local change

	ws := prepare(t, m, r, "m", 1)

	require.False(t, ws.FromPool)
	require.Equal(t, "a\n", readFile(t, ws.Path, "a.txt"))
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
}

func readyPool(t *testing.T, m *Manager, r *Repo) []string {
	t.Helper()
	var ready []string
	entries, _ := os.ReadDir(m.poolDir(r))
	for _, e := range entries {
		p := filepath.Join(m.poolDir(r), e.Name())
		if _, err := os.Stat(readyMark(p)); e.IsDir() && err == nil {
			ready = append(ready, p)
		}
	}
	return ready
}

// B18 with the pool on: the attempt's branch is checked out in a person's worktree. The claim
// is not attempted, the error is the clear one, and the person's branch is untouched.
func TestWarmPool_BranchCheckedOutElsewhereIsLeftAlone(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t, func(c *Config) { c.WarmPool = 1 })
	r := openRepo(t, m, tr.dir)
	require.NoError(t, m.FillPool(ctxT(t), r))
	elsewhere := filepath.Join(t.TempDir(), "persons")
	tr.git("worktree", "add", "-q", "-b", AttemptBranch("m", 1), elsewhere)
	tip := tr.tip(AttemptBranch("m", 1))

	_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1})

	require.ErrorIs(t, err, ErrBranchCheckedOut)
	require.Equal(t, tip, tr.tip(AttemptBranch("m", 1)))
	require.Len(t, readyPool(t, m, r), 1, "the pooled checkout was not used")
}
