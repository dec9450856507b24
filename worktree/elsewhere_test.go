package worktree

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A workspace of another scheduler node (cluster mode, the node gone): a manager with its
// own data dir lands the attempt's branch as it is (alone and in a batch), neither refusing the
// foreign path nor committing what that directory holds uncommitted.
func TestLand_ElsewhereLandsTheBranchAsItIs(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	tr.git("checkout", "-q", "--detach")
	gone := newTestManager(t) // the stopped node's manager
	rg := openRepo(t, gone, tr.dir)
	wss := prepareOn(t, gone, rg, "one", "two", "three")
	for _, ws := range wss {
		writeFile(t, ws.Path, ws.MissionID+".txt", "committed\n")
		_, _, err := gone.CommitPending(ctxT(t), ws, "")
		require.NoError(t, err)
		writeFile(t, ws.Path, ws.MissionID+"-late.txt", "left uncommitted\n")
	}

	leader := newTestManager(t)
	r := openRepo(t, leader, tr.dir)
	_, err := leader.Land(ctxT(t), LandRequest{Repo: r, MissionID: "one", Attempt: 1, Workspace: wss[0]})
	require.ErrorIs(t, err, ErrPathEscapes, "without Elsewhere another data dir's workspace is refused")

	l, err := leader.Land(ctxT(t), LandRequest{Repo: r, MissionID: "one", Attempt: 1, Workspace: wss[0], Elsewhere: true})
	require.NoError(t, err)
	require.Equal(t, LandLanded, l.Status)
	reqs := batchOf(r, wss[1:]...)
	for i := range reqs {
		reqs[i].Elsewhere = true
	}
	for _, bl := range landBatch(t, leader, reqs) {
		require.Equal(t, LandLanded, bl.Status)
	}
	for _, ws := range wss {
		tr.git("cat-file", "-e", "main:"+ws.MissionID+".txt")
		_, err := gitTry(tr.dir, "cat-file", "-e", "main:"+ws.MissionID+"-late.txt")
		require.Error(t, err, "nothing of the foreign directory was committed")
		require.Contains(t, gitIn(t, ws.Path, "status", "--porcelain"), ws.MissionID+"-late.txt", "the directory was not touched")
	}
}
