package worktree

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Eight goroutines land eight missions onto one branch at once, through two Managers sharing
// the data directory (as two scheduler processes would: the file lock is what serialises
// them). Every mission lands exactly once, the history holds all of them, fsck is clean.
func TestLand_EightConcurrentMissionsLandExactlyOnce(t *testing.T) {
	t.Parallel()
	files := map[string]string{"shared.txt": ""}
	for i := range 8 {
		files[fmt.Sprintf("m%d.txt", i)] = "base\n"
	}
	tr := newTestRepo(t, files)
	tr.git("checkout", "-q", "--detach") // main not checked out: compare-and-set path
	dataDir := t.TempDir()
	m1 := newTestManager(t, func(c *Config) { c.DataDir = dataDir })
	m2 := newTestManager(t, func(c *Config) { c.DataDir = dataDir })
	r1 := openRepo(t, m1, tr.dir)
	r2 := openRepo(t, m2, tr.dir)

	workspaces := make([]Workspace, 8)
	for i := range 8 {
		ws, err := m1.Prepare(ctxT(t), PrepareRequest{Repo: r1, MissionID: fmt.Sprintf("mission-%d", i), Attempt: 1, TargetBranch: "main"})
		require.NoError(t, err)
		writeFile(t, ws.Path, fmt.Sprintf("m%d.txt", i), fmt.Sprintf("mission %d\n", i))
		workspaces[i] = ws
	}

	results := make([]Landing, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			m, r := m1, r1
			if i%2 == 1 {
				m, r = m2, r2
			}
			ws := workspaces[i]
			results[i], errs[i] = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: ws.MissionID, Attempt: 1, Workspace: ws})
		})
	}
	wg.Wait()

	fastForwards := 0
	for i := range 8 {
		require.NoError(t, errs[i], "mission %d", i)
		require.Equal(t, LandLanded, results[i].Status, "mission %d", i)
		require.True(t, isAncestor(t, tr.dir, results[i].BranchTip, "main"), "mission %d in history", i)
		require.Equal(t, fmt.Sprintf("mission %d", i), tr.git("show", fmt.Sprintf("main:m%d.txt", i)))
		merges := countTrailer(t, tr.dir, "main", workspaces[i].MissionID, 1) - 1 // minus the pending-work commit
		if results[i].FastForward {
			fastForwards++
			require.Equal(t, 0, merges)
		} else {
			require.Equal(t, 1, merges, "mission %d merged exactly once", i)
		}
	}
	require.Equal(t, 1, fastForwards, "only the first landing can fast-forward")
	require.Equal(t, "9", tr.git("rev-list", "--count", "--first-parent", "main"),
		"first-parent line: the initial commit, the fast-forwarded commit, 7 merges")
	for i := range 8 {
		l, err := m2.Land(ctxT(t), LandRequest{Repo: r2, MissionID: workspaces[i].MissionID, Attempt: 1, Workspace: workspaces[i]})
		require.NoError(t, err)
		require.Equal(t, LandAlreadyLanded, l.Status)
	}
	fsckClean(t, tr.dir)
}
