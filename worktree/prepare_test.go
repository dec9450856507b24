package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPrepare_WorktreeOnOwnBranchFromTargetTip(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", "dir/b.txt": "b\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	ws := prepare(t, m, r, "m-1", 1)

	require.Equal(t, filepath.Join(m.Config().DataDir, "worktrees", r.ID(), "m-1", "a1"), ws.Path)
	require.Equal(t, "mcp-scheduler/m-1/a1", ws.Branch)
	require.Equal(t, tr.tip("main"), ws.BaseCommit)
	require.Equal(t, "main", ws.TargetBranch)
	require.Equal(t, StrategyWorktree, ws.Strategy)
	require.False(t, ws.ReadOnly)
	require.Equal(t, "mcp-scheduler/m-1/a1", gitIn(t, ws.Path, "branch", "--show-current"))
	require.Equal(t, ws.BaseCommit, gitIn(t, ws.Path, "rev-parse", "HEAD"))
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
	require.Equal(t, "b\n", readFile(t, ws.Path, "dir/b.txt"))
	// the brief directory is excluded through the common dir's info/exclude
	require.Contains(t, readFile(t, tr.dir, ".git/info/exclude"), "\n"+ExcludePattern+"\n")
	writeFile(t, ws.Path, ".mcp-scheduler/brief.md", "do it")
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
	// the person's checkout is untouched
	require.Equal(t, "main", tr.git("branch", "--show-current"))
}

func TestPrepare_SecondCallReturnsSameWorkspace(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "work.txt", "in progress")

	again := prepare(t, m, r, "m", 1)

	require.Equal(t, ws.Path, again.Path)
	require.Equal(t, ws.BaseCommit, again.BaseCommit)
	require.Equal(t, "in progress", readFile(t, again.Path, "work.txt"), "an existing workspace is never re-created")
}

func TestOpen_CachesHandleAndSharesIDAcrossLinkedWorktrees(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	require.Same(t, r, openRepo(t, m, filepath.Join(tr.dir, ".")))
	require.Len(t, r.ID(), 12)

	linked := filepath.Join(t.TempDir(), "linked")
	tr.git("worktree", "add", "-q", "-b", "side", linked)
	lr := openRepo(t, m, linked)
	require.Equal(t, r.ID(), lr.ID())
	real, _ := filepath.EvalSymlinks(linked)
	require.Equal(t, real, lr.Root())
	b, err := lr.DefaultBranch()
	require.NoError(t, err)
	require.Equal(t, "side", b)
}

func TestOpen_NotARepository(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	_, err := m.Open(t.TempDir())
	require.ErrorIs(t, err, ErrNotRepository)
	_, err = m.Open(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, ErrNotRepository)
}

func TestNewManager_RejectsOldGit(t *testing.T) {
	t.Parallel()
	fake := filepath.Join(t.TempDir(), "git")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho 'git version 2.37.1'\n"), 0o755))
	_, err := NewManager(Config{DataDir: t.TempDir(), GitPath: fake})
	require.ErrorIs(t, err, ErrGitTooOld)

	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho 'git version 2.39.3 (Apple Git-146)'\n"), 0o755))
	m, err := NewManager(Config{DataDir: t.TempDir(), GitPath: fake})
	require.NoError(t, err)
	require.NoError(t, m.Close())
}

func TestPrepare_DetachedHeadNeedsATarget(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	tr.git("checkout", "-q", "--detach")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	_, err := r.DefaultBranch()
	require.ErrorIs(t, err, ErrDetachedHead)

	_, err = m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1})
	require.ErrorIs(t, err, ErrDetachedHead)

	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1, TargetBranch: "main"})
	require.NoError(t, err)
	require.Equal(t, tr.tip("main"), ws.BaseCommit)
}

func TestPrepare_UnknownTargetBranch(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1, TargetBranch: "nope"})
	require.ErrorIs(t, err, ErrUnknownRef)
	_, statErr := os.Stat(filepath.Join(m.Config().DataDir, "worktrees", r.ID(), "m"))
	require.True(t, errors.Is(statErr, os.ErrNotExist))
}

func TestPrepare_CopiesOnlyIgnoredFiles(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{".gitignore": ".env\nconfig/*.local\n", "config/app.yml": "x\n"})
	tr.write(".env", "SECRET=1\n")
	tr.write("config/dev.local", "local\n")
	tr.write("notes.env.txt", "untracked, not ignored\n")
	m := newTestManager(t, func(c *Config) { c.CopyIgnored = []string{".env", "config/*", "*.txt"} })
	r := openRepo(t, m, tr.dir)

	ws := prepare(t, m, r, "m", 1)

	require.Equal(t, "SECRET=1\n", readFile(t, ws.Path, ".env"))
	require.Equal(t, "local\n", readFile(t, ws.Path, "config/dev.local"))
	require.Equal(t, "x\n", readFile(t, ws.Path, "config/app.yml"), "tracked files are never overwritten")
	_, err := os.Stat(filepath.Join(ws.Path, "notes.env.txt"))
	require.ErrorIs(t, err, os.ErrNotExist, "an untracked file that is not ignored could be committed: never copied")
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
}

func TestPrepare_SnapshotIsReadOnlyAndDetached(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"f": "1\n"})
	first := tr.tip("main")
	tr.write("f", "2\n")
	tr.commitAll("second")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "review", Attempt: 1,
		Strategy: StrategySnapshot, SnapshotCommit: first[:10]})
	require.NoError(t, err)

	require.True(t, ws.ReadOnly)
	require.Empty(t, ws.Branch)
	require.Equal(t, first, ws.BaseCommit)
	require.Equal(t, "1\n", readFile(t, ws.Path, "f"))
	require.Equal(t, "", gitIn(t, ws.Path, "branch", "--show-current"))
	_, _, err = m.CommitPending(ctxT(t), ws, "x")
	require.ErrorIs(t, err, ErrReadOnlyWorkspace)
	_, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "review", Attempt: 1, Workspace: ws})
	require.ErrorIs(t, err, ErrReadOnlyWorkspace)
	require.NoError(t, m.Remove(ctxT(t), ws, RemoveOptions{}))
	_, err = os.Stat(ws.Path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestPrepare_MainIsTheRepositoryCheckoutReadOnly(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "look", Attempt: 1, Strategy: StrategyMain})
	require.NoError(t, err)
	require.Equal(t, r.Root(), ws.Path)
	require.True(t, ws.ReadOnly)
	require.Equal(t, "main", ws.Branch)
	require.Equal(t, tr.tip("main"), ws.BaseCommit)
	require.ErrorIs(t, m.Remove(ctxT(t), ws, RemoveOptions{Force: true}), ErrReadOnlyWorkspace)
	_, _, err = m.CommitPending(ctxT(t), ws, "x")
	require.ErrorIs(t, err, ErrReadOnlyWorkspace)
}

func TestPrepare_UnknownStrategyAndMisplacedFields(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	for _, req := range []PrepareRequest{
		{Repo: r, MissionID: "m", Attempt: 1, Strategy: "docker"},
		{Repo: r, MissionID: "m", Attempt: 1, Strategy: StrategySnapshot, StartPoint: "main"},
		{Repo: r, MissionID: "m", Attempt: 1, SnapshotCommit: "main"},
	} {
		_, err := m.Prepare(ctxT(t), req)
		require.ErrorIs(t, err, ErrInvalidStrategy)
	}
	_, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 0})
	require.ErrorIs(t, err, ErrInvalidAttempt)
}

func TestPrepare_ResumeContinuesInPredecessorWorkspace(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	first := prepare(t, m, r, "m", 1)
	writeFile(t, first.Path, "half-done.txt", "checkpointed work\n")

	next, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 2, Resume: &first})
	require.NoError(t, err)

	require.True(t, next.Resumed)
	require.Equal(t, first.Path, next.Path)
	require.Equal(t, first.Branch, next.Branch)
	require.Equal(t, "checkpointed work\n", readFile(t, next.Path, "half-done.txt"))
	l := land(t, m, r, next)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, "checkpointed work\n", tr.git("show", "main:half-done.txt")+"\n")
}

func TestPrepare_ResumeAfterDirectoryDeletedKeepsCommittedWork(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	first := prepare(t, m, r, "m", 1)
	writeFile(t, first.Path, "done.txt", "committed\n")
	gitIn(t, first.Path, "add", "-A")
	gitIn(t, first.Path, "commit", "-q", "-m", "agent commit")
	require.NoError(t, os.RemoveAll(first.Path))

	next, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 2, Resume: &first})
	require.NoError(t, err)
	require.True(t, next.Resumed)
	require.Equal(t, "committed\n", readFile(t, next.Path, "done.txt"))

	require.NoError(t, m.Remove(ctxT(t), next, RemoveOptions{DeleteBranch: true}))
	_, err = m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 3, Resume: &first})
	require.ErrorIs(t, err, ErrWorkspaceGone)
}

func TestPrepare_IsolatedCopyHasItsOwnGitDirAndLands(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "iso", Attempt: 1, Strategy: StrategyIsolatedCopy})
	require.NoError(t, err)

	st, err := os.Stat(filepath.Join(ws.Path, ".git"))
	require.NoError(t, err)
	require.True(t, st.IsDir(), "an isolated copy keeps its git data inside the workspace")
	require.Equal(t, ws.Branch, gitIn(t, ws.Path, "branch", "--show-current"))
	writeFile(t, ws.Path, "b.txt", "from the sandbox\n")
	gitIn(t, ws.Path, "add", "-A")
	gitIn(t, ws.Path, "commit", "-q", "-m", "agent")
	writeFile(t, ws.Path, "c.txt", "left uncommitted\n")
	tr.write("z.txt", "person\n")
	tr.commitAll("person moves main")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"b.txt", "c.txt"}, l.ChangedFiles)
	require.Equal(t, "from the sandbox", tr.git("show", "main:b.txt"))
	require.Equal(t, "left uncommitted", tr.git("show", "main:c.txt"))
	require.Equal(t, "from the sandbox\n", readFile(t, tr.dir, "b.txt"), "main is checked out: fast-forwarded there")
	require.Equal(t, LandAlreadyLanded, land(t, m, r, ws).Status)
	require.NoError(t, m.Remove(ctxT(t), ws, RemoveOptions{DeleteBranch: true}))
	require.NotContains(t, tr.git("branch", "--list"), "mcp-scheduler/iso")
}

func TestPrepare_RepairStartsFromBranchAndLeavesConflictMarkers(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"f.txt": "one\ntwo\nthree\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws1 := prepare(t, m, r, "m", 1)
	writeFile(t, ws1.Path, "f.txt", "one\nMISSION\nthree\n")
	tr.write("f.txt", "one\nPERSON\nthree\n")
	tr.commitAll("person")
	l := land(t, m, r, ws1)
	require.Equal(t, LandConflicted, l.Status)

	ws2, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 2,
		StartPoint: ws1.Branch, MergeTarget: true})
	require.NoError(t, err)
	require.Equal(t, []string{"f.txt"}, ws2.Conflicts)
	require.Equal(t, l.BranchTip, ws2.BaseCommit)
	require.Contains(t, readFile(t, ws2.Path, "f.txt"), "<<<<<<<")
	_, _, err = m.CommitPending(ctxT(t), ws2, "")
	require.ErrorIs(t, err, ErrUnresolvedConflicts)
	_, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "m", Attempt: 2, Workspace: ws2})
	require.ErrorIs(t, err, ErrUnresolvedConflicts)

	writeFile(t, ws2.Path, "f.txt", "one\nPERSON and MISSION\nthree\n")
	l2 := land(t, m, r, ws2)
	require.Equal(t, LandLanded, l2.Status)
	person := l.OldTarget
	require.False(t, l2.FastForward, "the repair merged the target in on its second parent: a merge commit keeps main's first-parent history")
	require.Equal(t, person, strings.Fields(tr.git("log", "-1", "--format=%P", "main"))[0])
	require.Equal(t, "one\nPERSON and MISSION\nthree", tr.git("show", "main:f.txt"))
	require.Equal(t, "one\nPERSON and MISSION\nthree\n", readFile(t, tr.dir, "f.txt"))
}

func TestPrepare_PathsWithSpacesAndNonASCII(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	tr := newTestRepoAt(t, filepath.Join(base, "my repo ü"), map[string]string{"docs/read me ✓.md": "x\n", "ünï cödé.txt": "1\n"})
	m := newTestManager(t, func(c *Config) { c.DataDir = filepath.Join(base, "data dir é") })
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	require.True(t, strings.Contains(ws.Path, "data dir é"))
	writeFile(t, ws.Path, "ünï cödé.txt", "2\n")
	writeFile(t, ws.Path, "new dir/ファイル.txt", "new\n")
	tr.write("other file.txt", "person\n")
	tr.commitAll("person")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"new dir/ファイル.txt", "ünï cödé.txt"}, l.ChangedFiles)
	require.Equal(t, "new\n", readFile(t, tr.dir, "new dir/ファイル.txt"))
	d, err := m.Diff(ctxT(t), r, ws.BaseCommit, ws.Branch)
	require.NoError(t, err)
	require.Len(t, d.Files, 2)
}

func TestPrepare_RepositoryWithSubmoduleNeverFetches(t *testing.T) {
	t.Parallel()
	sub := newTestRepo(t, map[string]string{"lib.txt": "lib\n"})
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	tr.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "vendor/lib")
	tr.commitAll("add submodule")
	require.NoError(t, os.RemoveAll(sub.dir)) // any fetch from the submodule's URL fails
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	ws := prepare(t, m, r, "m", 1)

	require.Equal(t, "lib\n", readFile(t, ws.Path, "vendor/lib/lib.txt"), "populated from .git/modules, nothing fetched")
	writeFile(t, ws.Path, "a.txt", "changed\n")
	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"a.txt"}, l.ChangedFiles)
	require.NoError(t, m.Remove(ctxT(t), ws, RemoveOptions{DeleteBranch: true}))
}
