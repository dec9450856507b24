package worktree

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bug case B66: in a monorepo whose person works in a sparse cone, workspaces hold that cone
// (not the whole tree), a landing changes only what the attempt changed and never deletes what
// lies outside the cone, the person's sparse state and `git status` stay as they were, and
// cleanup does not take skip-worktree entries for uncommitted work.

// bigFiles is how many files big/ holds.
const bigFiles = 2000

// sparseRepo has bigFiles files under big/ and one under src/, and its checkout is
// `git sparse-checkout set --cone src` (which turns on extensions.worktreeConfig).
func sparseRepo(t *testing.T) *testRepo {
	t.Helper()
	files := map[string]string{"src/x.go": "package src\n"}
	for i := range bigFiles {
		files[fmt.Sprintf("big/d%02d/f%04d.txt", i/100, i)] = fmt.Sprintf("file %d\n", i)
	}
	tr := newTestRepo(t, files)
	tr.git("sparse-checkout", "set", "--cone", "src")
	require.Equal(t, "true", tr.git("config", "--get", "extensions.worktreeConfig"))
	return tr
}

// filesIn counts the regular files under dir, .git and .mcp-scheduler left out.
func filesIn(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".mcp-scheduler") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && d.Name() != ".git" {
			n++
		}
		return nil
	}))
	return n
}

func TestB66_WorkspacesInheritTheSparseConeAndLandingsKeepWhatLiesOutsideIt(t *testing.T) {
	t.Parallel()
	tr := sparseRepo(t)
	sparseBefore := tr.git("sparse-checkout", "list")
	statusBefore := porcelain(t, tr.dir)
	configBefore := readFile(t, tr.dir, ".git/config.worktree")
	clock := &fakeClock{now: time.Now()}
	m := newTestManager(t, func(c *Config) { c.Now = clock.Now })
	r := openRepo(t, m, tr.dir)

	start := time.Now()
	ws := prepare(t, m, r, "m", 1)
	t.Logf("B66: workspace of a %d-file repository with the cone src/ made in %s (%d files checked out)",
		bigFiles+1, time.Since(start).Round(time.Millisecond), filesIn(t, ws.Path))
	require.Equal(t, 1, filesIn(t, ws.Path), "only the cone is checked out")
	require.NoDirExists(t, filepath.Join(ws.Path, "big"))
	require.Equal(t, "src", gitIn(t, ws.Path, "sparse-checkout", "list"))
	require.Equal(t, "", porcelain(t, ws.Path), "skip-worktree entries are not changes")

	writeFile(t, ws.Path, "src/x.go", "package src\n\n// X is new.\nconst X = 1\n")
	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"src/x.go"}, l.ChangedFiles)
	require.Len(t, strings.Split(tr.git("ls-tree", "-r", "--name-only", "main", "big"), "\n"), bigFiles, "big/** is all still on main")
	require.Equal(t, "src/x.go", tr.git("diff", "--name-only", l.OldTarget, "main"))
	require.Equal(t, sparseBefore, tr.git("sparse-checkout", "list"), "the person's cone is unchanged")
	require.Equal(t, statusBefore, porcelain(t, tr.dir), "the person's git status is unchanged")
	require.Equal(t, configBefore, readFile(t, tr.dir, ".git/config.worktree"))
	require.Equal(t, "package src\n\n// X is new.\nconst X = 1\n", readFile(t, tr.dir, "src/x.go"), "the checkout followed the landing")
	require.NoDirExists(t, filepath.Join(tr.dir, "big"), "and still holds only its cone")

	clock.Add(48 * time.Hour)
	rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r, Keep: func(string, int) bool { return false }})
	require.NoError(t, err)
	require.Equal(t, []string{"m"}, missions(rep.Removed), "skip-worktree entries are not dirty: kept %+v", rep.Kept)
}

func TestB66_AnIsolatedCopyInheritsTheSparseConeToo(t *testing.T) {
	t.Parallel()
	tr := sparseRepo(t)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "iso", Attempt: 1, Strategy: StrategyIsolatedCopy})

	require.NoError(t, err)
	require.Equal(t, 1, filesIn(t, ws.Path))
	require.Equal(t, "src", gitIn(t, ws.Path, "sparse-checkout", "list"))
	writeFile(t, ws.Path, "src/y.go", "package src\n")
	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"src/y.go"}, l.ChangedFiles)
	require.Len(t, strings.Split(tr.git("ls-tree", "-r", "--name-only", "main", "big"), "\n"), bigFiles)
}

func TestB66_WithoutASparseCheckoutWorkspacesHoldTheWholeTree(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"src/x.go": "package src\n", "big/a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	for _, s := range []Strategy{StrategyWorktree, StrategyIsolatedCopy} {
		ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m" + string(s[0]), Attempt: 1, Strategy: s})
		require.NoError(t, err)
		require.Equal(t, 2, filesIn(t, ws.Path), string(s))
	}
}
