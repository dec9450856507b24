package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// batchOf makes one LandRequest per workspace, with default options.
func batchOf(r *Repo, wss ...Workspace) []LandRequest {
	reqs := make([]LandRequest, len(wss))
	for i, ws := range wss {
		reqs[i] = LandRequest{Repo: r, MissionID: ws.MissionID, Attempt: ws.Attempt, Workspace: ws}
	}
	return reqs
}

// landBatch runs LandBatch, fails the test on a batch error or on any request's error, and
// returns the Landings in request order.
func landBatch(t testing.TB, m *Manager, reqs []LandRequest) []Landing {
	t.Helper()
	out, err := m.LandBatch(ctxT(t), reqs)
	require.NoError(t, err)
	require.Len(t, out, len(reqs))
	ls := make([]Landing, len(out))
	for i, bl := range out {
		require.NoError(t, bl.Err, "request %d", i)
		ls[i] = bl.Landing
	}
	return ls
}

// reflogLen counts the reflog entries of a branch.
func reflogLen(t testing.TB, dir, branch string) int {
	t.Helper()
	out := gitIn(t, dir, "reflog", "show", "--format=%H", "refs/heads/"+branch)
	if out == "" {
		return 0
	}
	return len(strings.Split(out, "\n"))
}

// parentsOf returns a commit's parents.
func parentsOf(t testing.TB, dir, commit string) []string {
	t.Helper()
	return strings.Fields(gitIn(t, dir, "log", "-1", "--format=%P", commit))
}

// prepareOn prepares attempt 1 of each mission with main as the target.
func prepareOn(t testing.TB, m *Manager, r *Repo, missions ...string) []Workspace {
	t.Helper()
	wss := make([]Workspace, len(missions))
	for i, mission := range missions {
		ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: mission, Attempt: 1, TargetBranch: "main"})
		require.NoError(t, err)
		wss[i] = ws
	}
	return wss
}

// detachedBatch makes a repository holding files whose main branch nobody has checked out, a
// manager, and one workspace per mission on main.
func detachedBatch(t *testing.T, files map[string]string, missions ...string) (*testRepo, *Manager, *Repo, []Workspace) {
	t.Helper()
	tr := newTestRepo(t, files)
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	return tr, m, r, prepareOn(t, m, r, missions...)
}

// failsOnBrokenTxt is a check that counts its calls and fails ("go test: FAIL") when the
// checked tree holds broken.txt.
func failsOnBrokenTxt(calls *atomic.Int32) func(context.Context, string) error {
	return func(_ context.Context, dir string) error {
		calls.Add(1)
		if _, err := os.Stat(filepath.Join(dir, "broken.txt")); err == nil {
			return errors.New("go test: FAIL")
		}
		return nil
	}
}

// writeOwnFiles leaves <mission>.txt uncommitted in each workspace.
func writeOwnFiles(t *testing.T, wss []Workspace) {
	t.Helper()
	for _, ws := range wss {
		writeFile(t, ws.Path, ws.MissionID+".txt", ws.MissionID+"\n")
	}
}

func TestLandBatch_ThreeDisjointAttemptsMoveTheTargetOnce(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	wss := prepareOn(t, m, r, "one", "two", "three")
	writeOwnFiles(t, wss)
	tr.write("person.txt", "p\n")
	old := tr.commitAll("person") // every attempt needs a merge commit
	tr.git("checkout", "-q", "--detach")
	reflog := reflogLen(t, tr.dir, "main")

	ls := landBatch(t, m, batchOf(r, wss...))

	final := tr.tip("main")
	require.Equal(t, reflog+1, reflogLen(t, tr.dir, "main"), "the target moved exactly once")
	require.Contains(t, tr.git("reflog", "-1", "main"), "mcp-scheduler: land")
	prev := old
	seen := map[string]bool{}
	for i, l := range ls {
		ws := wss[i]
		require.Equal(t, LandLanded, l.Status, ws.MissionID)
		require.False(t, l.FastForward)
		require.Equal(t, old, l.OldTarget, "OldTarget is the target before the batch")
		require.Equal(t, final, l.NewTarget, "NewTarget is the target after the batch")
		require.Equal(t, tr.tip(ws.Branch), l.BranchTip)
		require.NotEqual(t, ws.BaseCommit, l.BranchTip, "the pending work was committed")
		require.Equal(t, []string{ws.MissionID + ".txt"}, l.ChangedFiles)
		require.Empty(t, l.Checkout)
		require.False(t, seen[l.Commit], "each attempt has its own commit")
		seen[l.Commit] = true
		require.Equal(t, []string{prev, l.BranchTip}, parentsOf(t, tr.dir, l.Commit),
			"%s: merged on top of the previous attempt", ws.MissionID)
		msg := tr.git("log", "-1", "--format=%B", l.Commit)
		require.Contains(t, msg, "Mission-Id: "+ws.MissionID+"\nAttempt: 1")
		require.True(t, isAncestor(t, tr.dir, l.Commit, final))
		prev = l.Commit
	}
	require.Equal(t, ls[2].Commit, final)
	require.Equal(t, []string{ls[2].Commit, ls[1].Commit, ls[0].Commit, old},
		strings.Fields(tr.git("log", "--first-parent", "--format=%H", "-4", "main")))
	for _, name := range []string{"a.txt", "person.txt", "one.txt", "two.txt", "three.txt"} {
		tr.git("cat-file", "-e", "main:"+name)
	}
	require.Equal(t, "two", tr.git("show", "main:two.txt"))
	for _, ws := range wss {
		require.Equal(t, 2, countTrailer(t, tr.dir, "main", ws.MissionID, 1), "pending commit and merge")
	}
	fsckClean(t, tr.dir)
}

func TestLandBatch_FastForwardFirstThenMergeCommits(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "two", "three")
	writeOwnFiles(t, wss)
	old := tr.tip("main")
	reflog := reflogLen(t, tr.dir, "main")

	ls := landBatch(t, m, batchOf(r, wss...))

	final := tr.tip("main")
	require.Equal(t, reflog+1, reflogLen(t, tr.dir, "main"))
	require.Equal(t, LandLanded, ls[0].Status)
	require.True(t, ls[0].FastForward, "the first attempt's base is the target")
	require.Equal(t, ls[0].BranchTip, ls[0].Commit, "a fast-forward's commit is the branch tip")
	require.Equal(t, []string{old}, parentsOf(t, tr.dir, ls[0].Commit))
	require.Equal(t, []string{ls[0].Commit, ls[1].BranchTip}, parentsOf(t, tr.dir, ls[1].Commit))
	require.Equal(t, []string{ls[1].Commit, ls[2].BranchTip}, parentsOf(t, tr.dir, ls[2].Commit))
	for i, l := range ls {
		require.Equal(t, LandLanded, l.Status, i)
		require.Equal(t, i == 0, l.FastForward, i)
		require.Equal(t, old, l.OldTarget)
		require.Equal(t, final, l.NewTarget)
	}
	require.Equal(t, ls[2].Commit, final)
	for _, name := range []string{"one.txt", "two.txt", "three.txt"} {
		tr.git("cat-file", "-e", "main:"+name)
	}
	fsckClean(t, tr.dir)
}

func TestLandBatch_ConflictWithAnEarlierAttemptLeavesThatOneOut(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"f.txt": "x\n"}, "one", "two", "three")
	writeFile(t, wss[0].Path, "f.txt", "one\n")
	writeFile(t, wss[1].Path, "f.txt", "two\n")
	writeFile(t, wss[2].Path, "three.txt", "three\n")
	old := tr.tip("main")
	reflog := reflogLen(t, tr.dir, "main")

	ls := landBatch(t, m, batchOf(r, wss...))

	final := tr.tip("main")
	require.Equal(t, reflog+1, reflogLen(t, tr.dir, "main"))
	require.Equal(t, LandLanded, ls[0].Status)
	require.Equal(t, LandConflicted, ls[1].Status)
	require.Equal(t, []string{"f.txt"}, ls[1].ConflictPaths)
	require.Contains(t, ls[1].Detail, "CONFLICT (content): Merge conflict in f.txt")
	require.Empty(t, ls[1].Commit)
	require.Equal(t, old, ls[1].OldTarget)
	require.Equal(t, old, ls[1].NewTarget, "nothing of the conflicted attempt moved")
	require.Equal(t, LandLanded, ls[2].Status)
	require.Equal(t, []string{ls[0].Commit, ls[2].BranchTip}, parentsOf(t, tr.dir, ls[2].Commit),
		"the batch went on without the conflicted attempt")
	require.Equal(t, final, ls[2].Commit)
	require.Equal(t, final, ls[0].NewTarget)
	require.Equal(t, "one", tr.git("show", "main:f.txt"))
	require.Equal(t, "three", tr.git("show", "main:three.txt"))
	require.False(t, isAncestor(t, tr.dir, ls[1].BranchTip, "main"))
	require.Zero(t, countTrailer(t, tr.dir, "main", "two", 1))

	// Against the new target the attempt still conflicts on its own.
	require.Equal(t, LandConflicted, land(t, m, r, wss[1]).Status)
	require.Equal(t, final, tr.tip("main"))
}

func TestLandBatch_CommitsPendingWork(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n"}, "one", "two", "three")
	// one: committed by the agent, plus more left uncommitted.
	writeFile(t, wss[0].Path, "one.txt", "committed\n")
	gitIn(t, wss[0].Path, "add", "-A")
	gitIn(t, wss[0].Path, "commit", "-q", "-m", "agent commit")
	writeFile(t, wss[0].Path, "one-more.txt", "uncommitted\n")
	// two: only staged. three: a deletion and an untracked file in a new directory.
	writeFile(t, wss[1].Path, "two.txt", "staged\n")
	gitIn(t, wss[1].Path, "add", "two.txt")
	require.NoError(t, os.Remove(filepath.Join(wss[2].Path, "gone.txt")))
	writeFile(t, wss[2].Path, "dir/three.txt", "untracked\n")
	reqs := batchOf(r, wss...)
	reqs[1].Message = "Add two\n\nThe brief."

	ls := landBatch(t, m, reqs)

	for i, l := range ls {
		ws := wss[i]
		require.Equal(t, LandLanded, l.Status, ws.MissionID)
		require.Equal(t, tr.tip(ws.Branch), l.BranchTip)
		require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"), "%s: the workspace is clean", ws.MissionID)
		require.True(t, isAncestor(t, tr.dir, l.BranchTip, "main"))
	}
	require.Equal(t, []string{"one-more.txt", "one.txt"}, ls[0].ChangedFiles)
	require.Equal(t, []string{"dir/three.txt", "gone.txt"}, ls[2].ChangedFiles)
	require.Equal(t, "uncommitted", tr.git("show", "main:one-more.txt"))
	require.Equal(t, "staged", tr.git("show", "main:two.txt"))
	require.Equal(t, "untracked", tr.git("show", "main:dir/three.txt"))
	_, err := gitTry(tr.dir, "cat-file", "-e", "main:gone.txt")
	require.Error(t, err, "the deletion landed")
	require.Equal(t, "Add two\n\nThe brief.\n\nMission-Id: two\nAttempt: 1",
		tr.git("log", "-1", "--format=%B", ls[1].BranchTip), "the pending commit carries the request's message")
	require.Equal(t, "Commit the work the agent left uncommitted\n\nMission-Id: one\nAttempt: 1",
		tr.git("log", "-1", "--format=%B", ls[0].BranchTip))
	fsckClean(t, tr.dir)
}

func TestLandBatch_TargetCheckedOutCleanIsFastForwardedOnce(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	wss := prepareOn(t, m, r, "one", "two", "three")
	writeFile(t, wss[0].Path, "a.txt", "A\n")
	writeFile(t, wss[1].Path, "two.txt", "two\n")
	writeFile(t, wss[2].Path, "three.txt", "three\n")
	tr.write("p.txt", "person\n")
	old := tr.commitAll("person")
	reflog := reflogLen(t, tr.dir, "main")

	ls := landBatch(t, m, batchOf(r, wss...))

	final := tr.tip("main")
	require.Equal(t, reflog+1, reflogLen(t, tr.dir, "main"), "one `git merge --ff-only`")
	require.Contains(t, tr.git("reflog", "-1", "main"), "merge")
	for i, l := range ls {
		require.Equal(t, LandLanded, l.Status, i)
		require.Equal(t, old, l.OldTarget)
		require.Equal(t, final, l.NewTarget)
		require.Equal(t, r.Root(), l.Checkout, "as Land reports it")
		require.Empty(t, l.BlockingFiles)
	}
	require.Equal(t, final, tr.git("rev-parse", "HEAD"))
	require.Equal(t, "main", tr.git("branch", "--show-current"))
	require.Equal(t, "A\n", readFile(t, tr.dir, "a.txt"))
	require.Equal(t, "two\n", readFile(t, tr.dir, "two.txt"))
	require.Equal(t, "three\n", readFile(t, tr.dir, "three.txt"))
	require.Equal(t, "person\n", readFile(t, tr.dir, "p.txt"))
	require.Empty(t, tr.git("status", "--porcelain"))
}

func TestLandBatch_TargetCheckedOutDirtyWaitsOnlyForTheBlockedAttempt(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", "mine.txt": "mine\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	wss := prepareOn(t, m, r, "one", "two", "three", "four")
	writeFile(t, wss[0].Path, "one.txt", "one\n")
	writeFile(t, wss[1].Path, "a.txt", "mission\n") // the person edits this one too
	writeFile(t, wss[2].Path, "three.txt", "three\n")
	// four conflicts with two in the batch; two never lands, so four is tried again alone
	// and waits for the same file.
	writeFile(t, wss[3].Path, "a.txt", "other mission\n")
	tr.write("a.txt", "person's unsaved edit\n")
	before := tr.tip("main")

	ls := landBatch(t, m, batchOf(r, wss...))

	for _, i := range []int{1, 3} {
		l := ls[i]
		require.Equal(t, LandWaiting, l.Status, i)
		require.Equal(t, r.Root(), l.Checkout)
		require.Equal(t, []string{"a.txt"}, l.BlockingFiles)
		require.Contains(t, l.Detail, "would be overwritten")
		require.Equal(t, l.OldTarget, l.NewTarget)
		require.NotEmpty(t, l.Commit)
	}
	for _, i := range []int{0, 2} {
		require.Equal(t, LandLanded, ls[i].Status, i)
	}
	require.NotEqual(t, before, tr.tip("main"))
	require.Equal(t, "person's unsaved edit\n", readFile(t, tr.dir, "a.txt"))
	require.Equal(t, "one\n", readFile(t, tr.dir, "one.txt"))
	require.Equal(t, "three\n", readFile(t, tr.dir, "three.txt"))

	tr.git("checkout", "--", "a.txt")
	ls = landBatch(t, m, batchOf(r, wss[:3]...))
	require.Equal(t, LandAlreadyLanded, ls[0].Status)
	require.Equal(t, LandLanded, ls[1].Status)
	require.Equal(t, LandAlreadyLanded, ls[2].Status)
	require.Equal(t, "mission\n", readFile(t, tr.dir, "a.txt"))
	require.Equal(t, ls[1].Commit, tr.git("rev-parse", "HEAD"))
	require.Empty(t, tr.git("status", "--porcelain"))
}

// A dirty checkout that touches none of the batch's files does not stop it: one move.
func TestLandBatch_TargetCheckedOutWithUnrelatedEditsMovesOnce(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", "mine.txt": "mine\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	wss := prepareOn(t, m, r, "one", "two")
	writeFile(t, wss[0].Path, "one.txt", "one\n")
	writeFile(t, wss[1].Path, "two.txt", "two\n")
	tr.write("mine.txt", "person's unsaved edit\n")
	reflog := reflogLen(t, tr.dir, "main")

	ls := landBatch(t, m, batchOf(r, wss...))

	require.Equal(t, LandLanded, ls[0].Status)
	require.Equal(t, LandLanded, ls[1].Status)
	require.Equal(t, reflog+1, reflogLen(t, tr.dir, "main"))
	require.Equal(t, "person's unsaved edit\n", readFile(t, tr.dir, "mine.txt"))
}

func TestLandBatch_FailingCheckFallsBackToOneByOne(t *testing.T) {
	t.Parallel()
	for _, onlyFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("check_on_first_request_only=%v", onlyFirst), func(t *testing.T) {
			tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "bad", "three")
			writeFile(t, wss[0].Path, "one.txt", "one\n")
			writeFile(t, wss[1].Path, "broken.txt", "breaks the build\n")
			writeFile(t, wss[2].Path, "three.txt", "three\n")
			old := tr.tip("main")
			var calls atomic.Int32
			check := failsOnBrokenTxt(&calls)
			reqs := batchOf(r, wss...)
			for i := range reqs {
				if i == 0 || !onlyFirst {
					reqs[i].Check = check
				}
			}

			ls := landBatch(t, m, reqs)

			final := tr.tip("main")
			require.Equal(t, LandLanded, ls[0].Status)
			require.Equal(t, LandChecksFailed, ls[1].Status)
			require.Equal(t, "go test: FAIL", ls[1].CheckOutput)
			require.NotEmpty(t, ls[1].Commit, "the candidate that was checked")
			require.Equal(t, ls[1].OldTarget, ls[1].NewTarget)
			require.Equal(t, LandLanded, ls[2].Status)
			require.Equal(t, final, ls[2].NewTarget)
			require.Equal(t, int32(4), calls.Load(), "once on the batch, then once per attempt")
			require.Equal(t, "one", tr.git("show", "main:one.txt"))
			require.Equal(t, "three", tr.git("show", "main:three.txt"))
			_, err := gitTry(tr.dir, "cat-file", "-e", "main:broken.txt")
			require.Error(t, err, "the attempt that broke the checks did not land")
			require.False(t, isAncestor(t, tr.dir, ls[1].BranchTip, "main"))
			require.True(t, isAncestor(t, tr.dir, old, "main"))
		})
	}
}

func TestLandBatch_PassingCheckRunsOnceOnTheBatchResult(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "two", "three")
	writeOwnFiles(t, wss)
	var calls atomic.Int32
	var checked string
	reqs := batchOf(r, wss...)
	for i := range reqs {
		reqs[i].Check = func(_ context.Context, dir string) error {
			calls.Add(1)
			checked = gitIn(t, dir, "rev-parse", "HEAD")
			for _, ws := range wss {
				if _, err := os.Stat(filepath.Join(dir, ws.MissionID+".txt")); err != nil {
					return err
				}
			}
			return nil
		}
	}

	ls := landBatch(t, m, reqs)

	require.Equal(t, int32(1), calls.Load())
	require.Equal(t, tr.tip("main"), checked, "the checks saw the commit the target moved to")
	for i, l := range ls {
		require.Equal(t, LandLanded, l.Status, "%d: %s", i, l.CheckOutput)
	}
}

func TestLandBatch_SingleAttemptFailingChecksIsChecksFailed(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	wss := prepareOn(t, m, r, "one", "two")
	writeFile(t, wss[0].Path, "one.txt", "one\n")
	// two changed nothing: the batch holds one attempt.
	before := tr.tip("main")
	var calls atomic.Int32
	reqs := batchOf(r, wss...)
	reqs[1].Check = func(context.Context, string) error { calls.Add(1); return errors.New("lint: 3 issues") }

	ls := landBatch(t, m, reqs)

	require.Equal(t, LandChecksFailed, ls[0].Status)
	require.Equal(t, "lint: 3 issues", ls[0].CheckOutput)
	require.Equal(t, ls[0].BranchTip, ls[0].Commit)
	require.Equal(t, LandNothingToLand, ls[1].Status)
	require.Equal(t, int32(1), calls.Load(), "a lone attempt is not landed again one by one")
	require.Equal(t, before, tr.tip("main"))
}

func TestLandBatch_SecondCallIsAlreadyLanded(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "two", "three")
	writeOwnFiles(t, wss)
	reqs := batchOf(r, wss...)
	first := landBatch(t, m, reqs)
	landed := tr.tip("main")
	reflog := reflogLen(t, tr.dir, "main")

	second := landBatch(t, m, reqs)

	require.Equal(t, landed, tr.tip("main"), "target unchanged")
	require.Equal(t, reflog, reflogLen(t, tr.dir, "main"))
	for i, l := range second {
		require.Equal(t, LandAlreadyLanded, l.Status, i)
		require.Equal(t, first[i].Commit, l.Commit, "%d: the commit that brought it in", i)
		require.Equal(t, landed, l.OldTarget)
		require.Equal(t, landed, l.NewTarget)
	}

	// Later commits on the target do not change the answer.
	other := prepareOn(t, m, r, "four")[0]
	writeFile(t, other.Path, "four.txt", "four\n")
	require.Equal(t, LandLanded, land(t, m, r, other).Status)
	third := landBatch(t, m, reqs)
	for i, l := range third {
		require.Equal(t, LandAlreadyLanded, l.Status, i)
		require.Equal(t, first[i].Commit, l.Commit, i)
	}
	for _, ws := range wss {
		require.Equal(t, LandAlreadyLanded, land(t, m, r, ws).Status, "Land agrees")
	}
}

func TestLandBatch_InvalidBatchMovesNothing(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	tr.git("branch", "other")
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	wss := prepareOn(t, m, r, "one", "two")
	writeOwnFiles(t, wss)
	tr2 := newTestRepo(t, nil)
	r2 := openRepo(t, m, tr2.dir)
	ws2 := prepare(t, m, r2, "elsewhere", 1)
	before := tr.tip("main")

	tooMany := make([]LandRequest, MaxLandBatch+1)
	for i := range tooMany {
		tooMany[i] = batchOf(r, wss[0])[0]
	}
	otherTarget := batchOf(r, wss...)
	otherTarget[1].TargetBranch = "other"
	otherRepo := append(batchOf(r, wss...), batchOf(r2, ws2)...)
	noRepo := batchOf(r, wss...)
	noRepo[1].Repo = nil
	for name, reqs := range map[string][]LandRequest{
		"empty":                 nil,
		"more than the maximum": tooMany,
		"different targets":     otherTarget,
		"different repos":       otherRepo,
		"no repo":               noRepo,
	} {
		out, err := m.LandBatch(ctxT(t), reqs)
		require.Error(t, err, name)
		require.Nil(t, out, name)
	}

	require.Equal(t, before, tr.tip("main"))
	require.Equal(t, tr.tip("main"), tr.tip("other"))
	for _, ws := range wss {
		require.Equal(t, ws.BaseCommit, tr.tip(ws.Branch), "%s: nothing ran, not even the pending commit", ws.MissionID)
		require.NotEmpty(t, gitIn(t, ws.Path, "status", "--porcelain"))
	}

	// Exactly MaxLandBatch is fine.
	full := wss
	for i := len(wss); i < MaxLandBatch; i++ {
		ws := prepareOn(t, m, r, fmt.Sprintf("m%02d", i))[0]
		writeFile(t, ws.Path, ws.MissionID+".txt", ws.MissionID+"\n")
		full = append(full, ws)
	}
	reflog := reflogLen(t, tr.dir, "main")
	ls := landBatch(t, m, batchOf(r, full...))
	require.Len(t, ls, MaxLandBatch)
	for i, l := range ls {
		require.Equal(t, LandLanded, l.Status, i)
		tr.git("cat-file", "-e", "main:"+full[i].MissionID+".txt")
	}
	require.Equal(t, reflog+1, reflogLen(t, tr.dir, "main"))
}

func TestLandBatch_InvalidRequestFailsAlone(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "two", "three")
	writeOwnFiles(t, wss)
	reqs := batchOf(r, wss...)
	reqs[1].MissionID = "not a valid id!"
	reqs = append(reqs, batchOf(r, wss[2])...)
	reqs[3].MissionID = "four" // the branch belongs to mission three
	reqs = append(reqs, batchOf(r, wss[2])...)
	reqs[4].WriteArea = []string{"a/[b"}
	reqs = append(reqs, reqs[0]) // the same attempt twice

	out, err := m.LandBatch(ctxT(t), reqs)
	require.NoError(t, err)
	require.Len(t, out, 6)
	require.ErrorContains(t, out[5].Err, "an earlier request of the batch lands the same attempt")

	require.ErrorIs(t, out[1].Err, ErrInvalidMissionID)
	require.Empty(t, out[1].Landing.Status)
	require.ErrorIs(t, out[3].Err, ErrInvalidRef)
	require.Error(t, out[4].Err)
	for _, i := range []int{0, 2} {
		require.NoError(t, out[i].Err)
		require.Equal(t, LandLanded, out[i].Landing.Status, i)
		require.Equal(t, tr.tip("main"), out[i].Landing.NewTarget)
	}
	require.Equal(t, wss[1].BaseCommit, tr.tip(wss[1].Branch), "the invalid request's pending work was not committed")
	_, err = gitTry(tr.dir, "cat-file", "-e", "main:two.txt")
	require.Error(t, err)
	tr.git("cat-file", "-e", "main:one.txt")
	tr.git("cat-file", "-e", "main:three.txt")

	// Every request invalid: nothing runs, no batch error.
	out, err = m.LandBatch(ctxT(t), reqs[1:2])
	require.NoError(t, err)
	require.ErrorIs(t, out[0].Err, ErrInvalidMissionID)
}

func TestLandBatch_NothingToLandIsLeftOut(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "idle", "undone", "three")
	writeFile(t, wss[0].Path, "one.txt", "one\n")
	writeFile(t, wss[3].Path, "three.txt", "three\n")
	// undone: commits that cancel out.
	writeFile(t, wss[2].Path, "x.txt", "x\n")
	gitIn(t, wss[2].Path, "add", "-A")
	gitIn(t, wss[2].Path, "commit", "-q", "-m", "add")
	gitIn(t, wss[2].Path, "rm", "-q", "x.txt")
	gitIn(t, wss[2].Path, "commit", "-q", "-m", "remove again")
	old := tr.tip("main")

	ls := landBatch(t, m, batchOf(r, wss...))

	final := tr.tip("main")
	require.Equal(t, LandLanded, ls[0].Status)
	require.True(t, ls[0].FastForward)
	require.Equal(t, LandNothingToLand, ls[1].Status)
	require.Equal(t, LandNothingToLand, ls[2].Status)
	for _, l := range ls[1:3] {
		require.Empty(t, l.Commit)
		require.Equal(t, old, l.OldTarget)
		require.Equal(t, old, l.NewTarget)
	}
	require.Equal(t, LandLanded, ls[3].Status)
	require.Equal(t, []string{ls[0].Commit, ls[3].BranchTip}, parentsOf(t, tr.dir, ls[3].Commit))
	require.Equal(t, final, ls[3].Commit)
	require.False(t, isAncestor(t, tr.dir, ls[2].BranchTip, "main"))
}

// A repair mission's branch starts from its subject's branch: batched after it, the subject
// is already in the candidate, and lands with the batch.
func TestLandBatch_RepairBranchCarriesItsSubject(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"f.txt": "x\n"})
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	subject := prepareOn(t, m, r, "subject")[0]
	writeFile(t, subject.Path, "f.txt", "subject\n")
	_, _, err := m.CommitPending(ctxT(t), subject, "")
	require.NoError(t, err)
	repair, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "repair", Attempt: 1,
		TargetBranch: "main", StartPoint: subject.Branch})
	require.NoError(t, err)
	writeFile(t, repair.Path, "fix.txt", "fix\n")
	tr.git("update-ref", "refs/heads/main",
		gitIn(t, tr.dir, "commit-tree", "-p", "main", "-m", "person", gitIn(t, tr.dir, "rev-parse", "main^{tree}")))
	old := tr.tip("main")

	ls := landBatch(t, m, batchOf(r, repair, subject))

	final := tr.tip("main")
	require.Equal(t, LandLanded, ls[0].Status)
	require.Equal(t, LandLanded, ls[1].Status, "brought in by the repair")
	require.Equal(t, final, ls[0].Commit)
	require.Equal(t, old, ls[1].OldTarget)
	require.Equal(t, final, ls[1].NewTarget)
	require.True(t, isAncestor(t, tr.dir, subject.Branch, "main"))
	require.Equal(t, "subject", tr.git("show", "main:f.txt"))

	again := land(t, m, r, subject)
	require.Equal(t, LandAlreadyLanded, again.Status)
	require.Equal(t, again.Commit, ls[1].Commit, "the commit that brought it in, as Land finds it")
}

func TestLandBatch_WorkspaceDirectoryGoneLandsTheBranch(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "two")
	writeFile(t, wss[0].Path, "one.txt", "one\n")
	_, _, err := m.CommitPending(ctxT(t), wss[0], "")
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(wss[0].Path))
	writeFile(t, wss[1].Path, "two.txt", "two\n")

	ls := landBatch(t, m, batchOf(r, wss...))

	require.Equal(t, LandLanded, ls[0].Status)
	require.Equal(t, LandLanded, ls[1].Status)
	tr.git("cat-file", "-e", "main:one.txt")
	tr.git("cat-file", "-e", "main:two.txt")
}

func TestLandBatch_CancelledContextMovesNothing(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "two")
	writeOwnFiles(t, wss)
	before := tr.tip("main")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := m.LandBatch(ctx, batchOf(r, wss...))

	require.Error(t, err)
	require.Equal(t, before, tr.tip("main"))
}

// A batch and single landings onto the same target are serialised by the landing lock: no
// landing is lost.
func TestLandBatch_ConcurrentWithLand(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "b1", "b2", "b3", "s1", "s2")
	writeOwnFiles(t, wss)
	var wg sync.WaitGroup
	var batch []BatchLanding
	var batchErr error
	singles := make([]Landing, 2)
	singleErrs := make([]error, 2)
	wg.Add(3)
	go func() {
		defer wg.Done()
		batch, batchErr = m.LandBatch(ctxT(t), batchOf(r, wss[:3]...))
	}()
	for i, ws := range wss[3:] {
		go func() {
			defer wg.Done()
			singles[i], singleErrs[i] = m.Land(ctxT(t), batchOf(r, ws)[0])
		}()
	}
	wg.Wait()

	require.NoError(t, batchErr)
	for i, bl := range batch {
		require.NoError(t, bl.Err)
		require.Equal(t, LandLanded, bl.Landing.Status, i)
	}
	for i := range singles {
		require.NoError(t, singleErrs[i])
		require.Equal(t, LandLanded, singles[i].Status, i)
	}
	for _, ws := range wss {
		tr.git("cat-file", "-e", "main:"+ws.MissionID+".txt")
	}
	fsckClean(t, tr.dir)
}

// When the checks fail on a batch, an attempt that conflicted only with the one breaking
// them is landed again on its own: it must not stay conflicted with work that never lands.
func TestLandBatch_ConflictWithTheAttemptThatFailsTheChecksIsRetried(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "bad", "rival")
	writeFile(t, wss[0].Path, "a.txt", "bad\n")
	writeFile(t, wss[0].Path, "broken.txt", "breaks the build\n")
	writeFile(t, wss[1].Path, "a.txt", "rival\n")
	reqs := batchOf(r, wss...)
	for i := range reqs {
		reqs[i].Check = failsOnBrokenTxt(new(atomic.Int32))
	}

	ls := landBatch(t, m, reqs)

	require.Equal(t, LandChecksFailed, ls[0].Status)
	require.Equal(t, LandLanded, ls[1].Status, "the rival's conflict was with work that never landed")
	require.Equal(t, "rival", tr.git("show", "main:a.txt"))
}

// Every request of the batch failing while its pending work is committed (here: each
// workspace checked out on another branch) leaves nothing to stage: each request gets its
// error, the target stays, and there is no batch error (a CI run once panicked here).
func TestLandBatch_EveryPendingCommitFailingMovesNothing(t *testing.T) {
	t.Parallel()
	tr, m, r, wss := detachedBatch(t, map[string]string{"a.txt": "a\n"}, "one", "two")
	writeOwnFiles(t, wss)
	for i, ws := range wss {
		gitIn(t, ws.Path, "checkout", "-q", "-b", fmt.Sprintf("elsewhere-%d", i))
	}
	before := tr.tip("main")

	out, err := m.LandBatch(ctxT(t), batchOf(r, wss...))

	require.NoError(t, err)
	require.Len(t, out, 2)
	for i := range out {
		require.Error(t, out[i].Err, i)
		require.Contains(t, out[i].Err.Error(), "commit pending work", i)
	}
	require.Equal(t, before, tr.tip("main"))
}
