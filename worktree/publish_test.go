package worktree

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// remoteHasBranch reports whether the bare remote holds refs/heads/<branch>.
func (b *bareRemote) hasBranch(branch string) bool {
	b.t.Helper()
	return exec.Command("git", "-C", b.dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Run() == nil
}

// Node A's agent leaves its work uncommitted and A stops after the attempt completed: A had
// published the attempt's branch (its pending work committed first), so node B, another
// Manager on its own data dir, lands it from the remote (Elsewhere, Published); the landing
// deletes the branch from the remote and from B's clone, and the remote's history has the
// work once.
func TestPublish_AnotherNodeLandsThePublishedBranch(t *testing.T) {
	transports(t, func(t *testing.T, b *bareRemote) {
		mA, rA := remoteManager(t, b)
		ws := prepare(t, mA, rA, "m", 1)
		writeFile(t, ws.Path, "b.txt", "b\n")
		tip, err := mA.Publish(ctxT(t), rA, ws, "work of m")
		require.NoError(t, err)
		require.Equal(t, tip, b.tip(ws.Branch), "the remote holds the attempt's branch at its tip")
		require.Equal(t, "b\n", b.showFile(ws.Branch, "b.txt"), "the uncommitted work was committed before the push")

		mB, rB := remoteManager(t, b)
		require.False(t, rB.hasBranch(ws.Branch), "B's clone did not have the branch")
		l, err := mB.Land(ctxT(t), LandRequest{Repo: rB, MissionID: "m", Attempt: 1, Workspace: ws, Elsewhere: true, Published: true})
		require.NoError(t, err)
		require.Equal(t, LandLanded, l.Status)
		require.Equal(t, tip, l.BranchTip)
		require.Equal(t, "b\n", b.showFile("main", "b.txt"))
		require.Equal(t, 1, b.landedOnce("m"))
		require.False(t, b.hasBranch(ws.Branch), "the settled attempt's branch is deleted from the remote")
		require.False(t, rB.hasBranch(ws.Branch), "and from the clone that fetched it")
		fsckClean(t, b.dir)

		again, err := mA.Land(ctxT(t), LandRequest{Repo: rA, MissionID: "m", Attempt: 1, Workspace: ws, Published: true})
		require.NoError(t, err, "A, back, finds its attempt landed")
		require.Equal(t, LandAlreadyLanded, again.Status)
	})
}

// An attempt whose node did not publish it cannot be landed by another node: the error wraps
// ErrNotPublished and says that its node can still land it; nothing moves on the remote.
func TestPublish_UnpublishedBranchIsAClearError(t *testing.T) {
	t.Parallel()
	b := newBareRemote(t, map[string]string{"a.txt": "a\n"})
	mA, rA := remoteManager(t, b)
	ws := prepare(t, mA, rA, "m", 1)
	writeFile(t, ws.Path, "b.txt", "b\n")
	before := b.tip("main")

	mB, rB := remoteManager(t, b)
	_, err := mB.Land(ctxT(t), LandRequest{Repo: rB, MissionID: "m", Attempt: 1, Workspace: ws, Elsewhere: true, Published: true})
	require.ErrorIs(t, err, ErrNotPublished)
	require.Contains(t, err.Error(), "did not publish it")
	require.Equal(t, before, b.tip("main"))
}

// A repair mission prepared on node B starts from the branch of an attempt node A ran and
// published: B's Prepare fetches it.
func TestPublish_RepairOnAnotherNodeStartsFromThePublishedBranch(t *testing.T) {
	t.Parallel()
	b := newBareRemote(t, map[string]string{"a.txt": "a\n"})
	mA, rA := remoteManager(t, b)
	ws := prepare(t, mA, rA, "m", 1)
	writeFile(t, ws.Path, "b.txt", "b\n")
	tip, err := mA.Publish(ctxT(t), rA, ws, "work of m")
	require.NoError(t, err)

	mB, rB := remoteManager(t, b)
	repair, err := mB.Prepare(ctxT(t), PrepareRequest{Repo: rB, MissionID: "r", Attempt: 1, StartPoint: ws.Branch, MergeTarget: true})
	require.NoError(t, err)
	require.Equal(t, tip, repair.BaseCommit, "the repair starts from the published attempt")
	require.FileExists(t, repair.Path+"/b.txt")
}

// Publish refuses a local repository: only a remote one's branches are published.
func TestPublish_LocalRepositoryIsRefused(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	repo := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	r, err := m.Open(repo.dir)
	require.NoError(t, err)
	ws := prepare(t, m, r, "m", 1)
	_, err = m.Publish(ctxT(t), r, ws, "x")
	require.ErrorContains(t, err, "the repository is local")
}

// PrepareRemoteBranch pushes the attempt's branch at its start and makes no directory; a
// snapshot is handed out read-only at the commit it shows; FetchRemoteBranch brings what an
// agent pushed; a local repository is refused.
func TestRemoteBranch_PreparedOnTheRemoteAndFetchedBack(t *testing.T) {
	t.Parallel()
	b := newBareRemote(t, map[string]string{"a.txt": "a\n"})
	m, r := remoteManager(t, b)
	ws, err := m.PrepareRemoteBranch(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1})
	require.NoError(t, err)
	require.Equal(t, b.url, ws.RemoteURL)
	require.Equal(t, b.tip("main"), b.tip(ws.Branch), "the branch starts at the target's tip, on the remote")
	require.NoDirExists(t, ws.Path)

	other := b.pushFile("elsewhere.txt", "x\n") // a commit to push to the attempt's branch
	gitIn(t, b.dir, "update-ref", "refs/heads/"+ws.Branch, other)
	tip, err := m.FetchRemoteBranch(ctxT(t), r, ws)
	require.NoError(t, err)
	require.Equal(t, other, tip)

	snap, err := m.PrepareRemoteBranch(ctxT(t), PrepareRequest{Repo: r, MissionID: "rv", Attempt: 1, Strategy: StrategySnapshot, SnapshotCommit: ws.Branch})
	require.NoError(t, err)
	require.True(t, snap.ReadOnly)
	require.Equal(t, other, snap.BaseCommit)

	local := newTestManager(t)
	lr, err := local.Open(newTestRepo(t, map[string]string{"a.txt": "a\n"}).dir)
	require.NoError(t, err)
	_, err = local.PrepareRemoteBranch(ctxT(t), PrepareRequest{Repo: lr, MissionID: "m", Attempt: 1})
	require.ErrorIs(t, err, ErrInvalidStrategy)
	require.ErrorContains(t, err, "this one is local")
}
