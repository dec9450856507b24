package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLand_FastForwardWhenTargetDidNotMove(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	tr.git("checkout", "-q", "-b", "elsewhere") // main is not checked out anywhere
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	writeFile(t, ws.Path, "b.txt", "b\n")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.True(t, l.FastForward)
	require.Equal(t, ws.BaseCommit, l.OldTarget)
	require.Equal(t, l.Commit, l.NewTarget)
	require.Equal(t, l.Commit, tr.tip("main"))
	require.Equal(t, l.BranchTip, l.Commit)
	require.Empty(t, l.Checkout)
	require.Equal(t, []string{"b.txt"}, l.ChangedFiles)
	require.Equal(t, 1, countTrailer(t, tr.dir, "main", "m", 1), "the pending-work commit carries the trailers")
	require.Contains(t, tr.git("log", "-1", "--format=%an <%ae>", "main"), DefaultAuthorName)
	require.Contains(t, tr.git("reflog", "-1", "main"), "mcp-scheduler: land")
}

func TestLand_DisjointEditsMergeInTheObjectDatabase(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "shared.txt": "1\n2\n3\n4\n5\n6\n7\n8\n"})
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	wa, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "a", Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	wb, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "b", Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	writeFile(t, wa.Path, "a.txt", "A\n")
	writeFile(t, wa.Path, "shared.txt", "ONE\n2\n3\n4\n5\n6\n7\n8\n")
	writeFile(t, wb.Path, "b.txt", "B\n")
	writeFile(t, wb.Path, "shared.txt", "1\n2\n3\n4\n5\n6\n7\nEIGHT\n")

	la := land(t, m, r, wa)
	lb, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "b", Attempt: 1, Workspace: wb, Message: "Add B\n\nBody text."})
	require.NoError(t, err)

	require.Equal(t, LandLanded, la.Status)
	require.True(t, la.FastForward)
	require.Equal(t, LandLanded, lb.Status)
	require.False(t, lb.FastForward)
	require.Equal(t, la.Commit, lb.OldTarget)
	parents := strings.Fields(tr.git("log", "-1", "--format=%P", lb.Commit))
	require.Equal(t, []string{la.Commit, lb.BranchTip}, parents)
	msg := tr.git("log", "-1", "--format=%B", lb.Commit)
	require.True(t, strings.HasPrefix(msg, "Add B\n\nBody text.\n\nMission-Id: b\nAttempt: 1"), msg)
	require.Equal(t, "ONE\n2\n3\n4\n5\n6\n7\nEIGHT", tr.git("show", "main:shared.txt"))
	require.Equal(t, "A", tr.git("show", "main:a.txt"))
	require.Equal(t, "B", tr.git("show", "main:b.txt"))
	require.Equal(t, []string{"b.txt", "shared.txt"}, lb.ChangedFiles)
	fsckClean(t, tr.dir)
}

func TestLand_ConflictNamesPathsAndMovesNothing(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"f.txt": "x\n", "g.txt": "g\n", "ok.txt": "ok\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "f.txt", "mission\n")
	writeFile(t, ws.Path, "g.txt", "mission g\n")
	writeFile(t, ws.Path, "ok.txt", "fine\n")
	tr.write("f.txt", "person\n")
	tr.write("g.txt", "person g\n")
	before := tr.commitAll("person")

	l := land(t, m, r, ws)

	require.Equal(t, LandConflicted, l.Status)
	require.Equal(t, []string{"f.txt", "g.txt"}, l.ConflictPaths)
	require.Contains(t, l.Detail, "CONFLICT (content): Merge conflict in f.txt")
	require.Empty(t, l.Commit)
	require.Equal(t, before, tr.tip("main"))
	require.Equal(t, before, l.NewTarget)
	require.Equal(t, "person\n", readFile(t, tr.dir, "f.txt"))
	require.Empty(t, tr.git("status", "--porcelain"))
	require.NotEqual(t, ws.BaseCommit, tr.tip(ws.Branch), "the pending work was committed on the attempt's branch")
}

func TestLand_BinaryFiles(t *testing.T) {
	t.Parallel()
	bin := func(seed byte) string {
		b := make([]byte, 4096)
		for i := range b {
			b[i] = byte(i*7) ^ seed
		}
		b[10] = 0
		return string(b)
	}
	tr := newTestRepo(t, map[string]string{"img.bin": bin(1), "other.bin": bin(2), "t.txt": "t\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	w1 := prepare(t, m, r, "one", 1)
	w2 := prepare(t, m, r, "two", 1)
	w3 := prepare(t, m, r, "three", 1)
	writeFile(t, w1.Path, "img.bin", bin(3))
	writeFile(t, w2.Path, "other.bin", bin(4))
	writeFile(t, w3.Path, "img.bin", bin(5))

	require.Equal(t, LandLanded, land(t, m, r, w1).Status)
	require.Equal(t, LandLanded, land(t, m, r, w2).Status, "disjoint binary edits merge")
	l3 := land(t, m, r, w3)
	require.Equal(t, LandConflicted, l3.Status, "both sides changed the same binary")
	require.Equal(t, []string{"img.bin"}, l3.ConflictPaths)
	require.Equal(t, bin(3), readFile(t, tr.dir, "img.bin"))
	require.Equal(t, bin(4), readFile(t, tr.dir, "other.bin"))
	d, err := m.Diff(ctxT(t), r, w2.BaseCommit, "main")
	require.NoError(t, err)
	require.Contains(t, d.Patch, "Binary files")
}

func TestLand_RenameOnOneSideEditOnTheOther(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("line of text that makes the file similar\n", 20)
	tr := newTestRepo(t, map[string]string{"old/name.go": body})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	require.NoError(t, os.MkdirAll(filepath.Join(ws.Path, "new"), 0o755))
	gitIn(t, ws.Path, "mv", "old/name.go", "new/name.go")
	tr.write("old/name.go", body+"appended by person\n")
	tr.commitAll("person edits")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"new/name.go", "old/name.go"}, l.ChangedFiles)
	require.Equal(t, body+"appended by person\n", readFile(t, tr.dir, "new/name.go"))
	_, err := os.Stat(filepath.Join(tr.dir, "old/name.go"))
	require.ErrorIs(t, err, os.ErrNotExist)
	d, err := m.Diff(ctxT(t), r, ws.BaseCommit, ws.Branch)
	require.NoError(t, err)
	require.Equal(t, []FileChange{{Path: "new/name.go", OldPath: "old/name.go", Action: FileRenamed}}, d.Files)
}

func TestLand_CRLFAndGitattributes(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{
		".gitattributes": "*.txt text eol=crlf\n*.sh text eol=lf\n*.dat binary\n",
		"win.txt":        "a\nb\nc\n",
		"run.sh":         "echo hi\n",
		"raw.dat":        "x\r\ny\n",
	})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	require.Equal(t, "a\r\nb\r\nc\r\n", readFile(t, ws.Path, "win.txt"))
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
	writeFile(t, ws.Path, "win.txt", "a\r\nB\r\nc\r\n")
	writeFile(t, ws.Path, "new.txt", "one\r\ntwo\r\n")
	tr.write("run.sh", "echo hello\n")
	tr.commitAll("person")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"new.txt", "win.txt"}, l.ChangedFiles, "line endings alone are no change")
	require.Equal(t, "a\nB\nc\n", tr.git("cat-file", "blob", "main:win.txt")+"\n", "stored normalised")
	require.Equal(t, "a\r\nB\r\nc\r\n", readFile(t, tr.dir, "win.txt"), "checked out with CRLF")
	require.Equal(t, "x\r\ny\n", readFile(t, tr.dir, "raw.dat"))
	require.Empty(t, tr.git("status", "--porcelain"))
}

func TestLand_SecondCallIsAlreadyLanded(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "b.txt", "b\n")
	tr.write("c.txt", "c\n")
	tr.commitAll("person")

	first := land(t, m, r, ws)
	second := land(t, m, r, ws)

	require.Equal(t, LandLanded, first.Status)
	require.Equal(t, LandAlreadyLanded, second.Status)
	require.Equal(t, first.Commit, second.Commit)
	require.Equal(t, first.NewTarget, tr.tip("main"))
	require.Equal(t, 1, countTrailer(t, tr.dir, "main", "m", 1)-1, "one pending commit plus exactly one merge")

	tr.write("d.txt", "d\n")
	tr.commitAll("person again")
	require.Equal(t, first.Commit, land(t, m, r, ws).Commit, "found in the target's history later on")
}

func TestLand_NothingToLand(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	require.Equal(t, LandNothingToLand, land(t, m, r, ws).Status)

	writeFile(t, ws.Path, "x.txt", "x\n")
	gitIn(t, ws.Path, "add", "-A")
	gitIn(t, ws.Path, "commit", "-q", "-m", "add")
	gitIn(t, ws.Path, "rm", "-q", "x.txt")
	gitIn(t, ws.Path, "commit", "-q", "-m", "remove again")
	tr.write("p.txt", "p\n")
	before := tr.commitAll("person")
	require.Equal(t, LandNothingToLand, land(t, m, r, ws).Status, "commits that cancel out change nothing")
	require.Equal(t, before, tr.tip("main"))
}

func TestLand_WriteAreaReportsOutsideFiles(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"internal/auth/a.go": "a\n", "cmd/main.go": "m\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "internal/auth/a.go", "A\n")
	writeFile(t, ws.Path, "internal/auth/sub/b.go", "B\n")
	writeFile(t, ws.Path, "cmd/main.go", "M\n")
	writeFile(t, ws.Path, "README.md", "changed\n")

	l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws,
		WriteArea: []string{"internal/auth/**"}})
	require.NoError(t, err)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"README.md", "cmd/main.go"}, l.OutsideWriteArea)
	_, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws, WriteArea: []string{"a/[b"}})
	require.Error(t, err)
}

func TestLand_ChecksRunOnTheMergedTreeAndFailureMovesNothing(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "mission.txt", "m\n")
	tr.write("person.txt", "p\n")
	before := tr.commitAll("person")
	var sawDir string
	failing := func(_ context.Context, dir string) error {
		sawDir = dir
		if _, err := os.Stat(filepath.Join(dir, "person.txt")); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "mission.txt")); err != nil {
			return err
		}
		return errors.New("go test: 1 failed")
	}

	l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws, Check: failing})
	require.NoError(t, err)

	require.Equal(t, LandChecksFailed, l.Status)
	require.Equal(t, "go test: 1 failed", l.CheckOutput, "the check saw both sides of the merge")
	require.NotEmpty(t, l.Commit)
	require.Equal(t, before, tr.tip("main"))
	// What a check leaves behind (build outputs, edits of tracked files) is gone before the
	// next check, which runs in the same checkout: path-keyed build caches stay warm.
	writeFile(t, sawDir, "bin/output", "built\n")
	admin := gitIn(t, sawDir, "rev-parse", "--absolute-git-dir")
	writeFile(t, admin, "marker", "kept unless the checkout is made again\n")
	writeFile(t, sawDir, "person.txt", "changed by a formatter\n")
	var again string
	l, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws,
		Check: func(_ context.Context, dir string) error {
			again = dir
			if _, err := os.Stat(filepath.Join(dir, "bin")); !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("untracked output left from the last check: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "person.txt")); err != nil || string(b) != "p\n" {
				return fmt.Errorf("person.txt is %q (%v), not the commit's", b, err)
			}
			return nil
		}})
	require.NoError(t, err)
	require.Equal(t, LandLanded, l.Status, l.CheckOutput)
	require.Equal(t, sawDir, again, "the checks' checkout is reused")
	require.FileExists(t, filepath.Join(admin, "marker"), "reset in place, not made again")
	require.Equal(t, l.Commit, gitIn(t, again, "rev-parse", "HEAD"))

	// Deleted by hand (or by a crash half-way): made again.
	require.NoError(t, os.RemoveAll(sawDir))
	ws2 := prepare(t, m, r, "n", 1)
	writeFile(t, ws2.Path, "n.txt", "n\n")
	l, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "n", Attempt: 1, Workspace: ws2,
		Check: func(_ context.Context, dir string) error {
			_, err := os.Stat(filepath.Join(dir, "n.txt"))
			return err
		}})
	require.NoError(t, err)
	require.Equal(t, LandLanded, l.Status, l.CheckOutput)
	fsckClean(t, tr.dir)
}

func TestLand_TargetMovedDuringLandingStartsOver(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	writeFile(t, ws.Path, "m.txt", "m\n")
	rounds := 0
	var personCommit string
	check := func(context.Context, string) error {
		rounds++
		if rounds == 1 { // a person commits to main while the checks run
			personCommit = gitIn(t, tr.dir, "commit-tree", "-p", "main", "-m", "person", gitIn(t, tr.dir, "rev-parse", "main^{tree}"))
			gitIn(t, tr.dir, "update-ref", "refs/heads/main", personCommit)
		}
		return nil
	}

	l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws, Check: check})
	require.NoError(t, err)

	require.Equal(t, 2, rounds, "the compare-and-set failed once, so the landing started over")
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, personCommit, l.OldTarget)
	require.True(t, isAncestor(t, tr.dir, personCommit, "main"), "the person's commit is kept")
	require.Equal(t, 1, countTrailer(t, tr.dir, "main", "m", 1)-1)
}

func TestLand_LargeRepository(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("pkg%02d/file%04d.txt", i%40, i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), 30)
	}
	tr := newTestRepo(t, files)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "big", 1)
	writeFile(t, ws.Path, "pkg00/file0000.txt", "changed\n")
	require.NoError(t, os.Remove(filepath.Join(ws.Path, "pkg01/file0001.txt")))
	writeFile(t, ws.Path, "pkg41/new.txt", "new\n")
	tr.write("pkg02/file0002.txt", "person\n")
	tr.commitAll("person")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"pkg00/file0000.txt", "pkg01/file0001.txt", "pkg41/new.txt"}, l.ChangedFiles)
	require.Equal(t, "person\n", readFile(t, tr.dir, "pkg02/file0002.txt"))
	require.Equal(t, "changed\n", readFile(t, tr.dir, "pkg00/file0000.txt"))
	require.Equal(t, 2000, len(strings.Split(tr.git("ls-files"), "\n")))
}

// The person's `git gc` repacks objects behind go-git's back (new pack, loose objects gone);
// reads re-index and landing and diffs keep working.
func TestLand_WorksAfterThePersonRunsGitGC(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	gc := func() {
		tr.git("gc", "--quiet", "--prune=now")
		tr.git("repack", "-a", "-d", "-q") // a new pack generation: the previous pack is gone
	}
	var landed []Workspace
	for i, mission := range []string{"one", "two", "three"} {
		ws := prepare(t, m, r, mission, 1)
		writeFile(t, ws.Path, mission+".txt", mission+"\n")
		_, _, err := m.CommitPending(ctxT(t), ws, "")
		require.NoError(t, err)
		tr.write(fmt.Sprintf("p%d.txt", i), "p\n")
		tr.commitAll("person")
		gc() // go-git has read (and indexed) the previous generation by now

		l := land(t, m, r, ws)
		require.Equal(t, LandLanded, l.Status, mission)
		require.Equal(t, []string{mission + ".txt"}, l.ChangedFiles)
		landed = append(landed, ws)
	}
	d, err := m.Diff(ctxT(t), r, landed[0].BaseCommit, "main")
	require.NoError(t, err)
	require.Len(t, d.Files, 6)
	for _, ws := range landed {
		require.Equal(t, LandAlreadyLanded, land(t, m, r, ws).Status)
	}
	fsckClean(t, tr.dir)
}

// The commit of what the agent left uncommitted carries the landing's message: with a
// fast-forward it is the commit the target's history shows (Claude Code and Codex never commit).
func TestLand_PendingWorkCommitCarriesTheMessage(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "n.txt", "new\n")
	l, err := m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 1, Workspace: ws, Message: "Add n\n\nThe brief."})
	require.NoError(t, err)
	require.Equal(t, LandLanded, l.Status)
	require.True(t, l.FastForward)
	require.Equal(t, "Add n\n\nThe brief.\n\nMission-Id: m\nAttempt: 1", tr.git("log", "-1", "--format=%B", "main"))
}
