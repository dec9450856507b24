package worktree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Submodules in workspaces (issue 29; docs/workspaces.md "Submodules"). Every repository here
// reaches its submodule through a bare repository that is deleted before the scheduler runs,
// so any fetch from the submodule's URL would fail.

// superproject is a person's checkout with submodule lib (recorded at c1; its module store
// also holds c2, lib's next commit) whose URL no longer exists.
type superproject struct {
	*testRepo
	c1, c2 string
}

func newSuperproject(t *testing.T) superproject {
	t.Helper()
	root := t.TempDir()
	lib := newTestRepoAt(t, filepath.Join(root, "lib0"), map[string]string{"l.txt": "one\n"})
	c1 := lib.tip("main")
	lib.write("l.txt", "two\n")
	c2 := lib.commitAll("two")
	bare := filepath.Join(root, "lib.git")
	gitIn(t, root, "clone", "-q", "--bare", lib.dir, bare)
	sup := newTestRepoAt(t, filepath.Join(root, "sup"), map[string]string{"s.txt": "s\n"})
	sup.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", bare, "lib")
	gitIn(t, filepath.Join(sup.dir, "lib"), "checkout", "-q", c1)
	sup.commitAll("add lib at its first commit")
	require.NoError(t, os.RemoveAll(bare))
	require.NoError(t, os.RemoveAll(lib.dir))
	return superproject{testRepo: sup, c1: c1, c2: c2}
}

// treeState lists every file under dir with its size and modification time.
func treeState(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
		return nil
	}))
	sort.Strings(out)
	return out
}

// A submodule is populated from the superproject's module store at its recorded commit with
// nothing fetched (its URL is gone) and the person's .git/modules untouched; the agent moves
// the submodule to another commit, and the new pointer lands like any other path; Remove
// deletes the workspace, populated submodule and all. On main before this change lib/ was an
// empty directory and nobody was told.
func TestSubmodule_PopulatedFromTheModuleStoreAndAPointerChangeLands(t *testing.T) {
	t.Parallel()
	sup := newSuperproject(t)
	store := filepath.Join(sup.dir, ".git", "modules", "lib")
	before := treeState(t, store)
	m := newTestManager(t)
	r := openRepo(t, m, sup.dir)

	ws := prepare(t, m, r, "sub", 1)
	sub := filepath.Join(ws.Path, "lib")
	require.Equal(t, "one\n", readFile(t, sub, "l.txt"))
	require.Equal(t, sup.c1, gitIn(t, sub, "rev-parse", "HEAD"))
	require.Len(t, ws.Notes, 1, "%q", ws.Notes)
	require.Contains(t, ws.Notes[0], "submodule lib is checked out at its recorded commit "+sup.c1[:12])
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))

	gitIn(t, sub, "checkout", "-q", sup.c2)
	writeFile(t, ws.Path, "a.txt", "a\n")
	gitIn(t, ws.Path, "add", "lib", "a.txt")
	gitIn(t, ws.Path, "commit", "-q", "-m", "lib at its second commit")
	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.ElementsMatch(t, []string{"a.txt", "lib"}, l.ChangedFiles)
	require.Equal(t, sup.c2, strings.Fields(sup.git("ls-tree", "main", "lib"))[2])
	require.Equal(t, before, treeState(t, store), "the person's module store is untouched")

	require.NoError(t, m.Remove(ctxT(t), ws, RemoveOptions{DeleteBranch: true}))
	require.NoDirExists(t, ws.Path)
	require.NotContains(t, sup.git("worktree", "list", "--porcelain"), ws.Path)
}

// A clone whose submodule was never initialised has no module store: the directory stays
// empty and the workspace's notes say why and what to run. On main before this change
// nothing said so.
func TestSubmodule_WithoutAModuleStoreTheDirectoryIsEmptyAndSaid(t *testing.T) {
	t.Parallel()
	sup := newSuperproject(t)
	clone := filepath.Join(t.TempDir(), "clone")
	gitIn(t, sup.dir, "clone", "-q", sup.dir, clone)
	require.NoDirExists(t, filepath.Join(clone, ".git", "modules"))
	m := newTestManager(t)
	r := openRepo(t, m, clone)

	ws := prepare(t, m, r, "empty", 1)
	entries, err := os.ReadDir(filepath.Join(ws.Path, "lib"))
	require.NoError(t, err)
	require.Empty(t, entries)
	require.Len(t, ws.Notes, 1, "%q", ws.Notes)
	require.Contains(t, ws.Notes[0], "submodule lib is empty: the repository has no local copy of it")
	require.Contains(t, ws.Notes[0], "git submodule update --init lib")
	l := land(t, m, r, ws)
	require.Equal(t, LandNothingToLand, l.Status)
}

// A superproject recording a commit its module store lacks: empty, and said.
func TestSubmodule_AMissingRecordedCommitIsSaid(t *testing.T) {
	t.Parallel()
	sup := newSuperproject(t)
	missing := strings.Repeat("ab", 20)
	sup.git("update-index", "--cacheinfo", "160000,"+missing+",lib")
	sup.git("commit", "-q", "-m", "lib at a commit nobody has")
	m := newTestManager(t)
	r := openRepo(t, m, sup.dir)

	ws := prepare(t, m, r, "missing", 1)
	entries, err := os.ReadDir(filepath.Join(ws.Path, "lib"))
	require.NoError(t, err)
	require.Empty(t, entries)
	require.Len(t, ws.Notes, 1, "%q", ws.Notes)
	require.Contains(t, ws.Notes[0], "lacks the recorded commit "+missing)
}

// Nested submodules come from the module store's own modules/ directory.
func TestSubmodule_NestedSubmodulesArePopulated(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	inner := newTestRepoAt(t, filepath.Join(root, "inner0"), map[string]string{"i.txt": "inner\n"})
	innerBare := filepath.Join(root, "inner.git")
	gitIn(t, root, "clone", "-q", "--bare", inner.dir, innerBare)
	lib := newTestRepoAt(t, filepath.Join(root, "lib0"), map[string]string{"l.txt": "lib\n"})
	lib.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", innerBare, "inner")
	lib.commitAll("add inner")
	libBare := filepath.Join(root, "lib.git")
	gitIn(t, root, "clone", "-q", "--bare", lib.dir, libBare)
	sup := newTestRepoAt(t, filepath.Join(root, "sup"), nil)
	sup.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", libBare, "lib")
	sup.git("-c", "protocol.file.allow=always", "submodule", "update", "--init", "--recursive", "-q")
	sup.commitAll("add lib")
	for _, d := range []string{innerBare, libBare, inner.dir, lib.dir} {
		require.NoError(t, os.RemoveAll(d))
	}
	require.DirExists(t, filepath.Join(sup.dir, ".git", "modules", "lib", "modules", "inner"))
	m := newTestManager(t)
	r := openRepo(t, m, sup.dir)

	ws := prepare(t, m, r, "nested", 1)
	require.Equal(t, "inner\n", readFile(t, ws.Path, "lib/inner/i.txt"))
	require.Len(t, ws.Notes, 2, "%q", ws.Notes)
	require.Contains(t, ws.Notes[1], "submodule lib/inner is checked out")
	require.Empty(t, gitIn(t, ws.Path, "status", "--porcelain"))
}

// A repair's merge of the target moves a submodule's pointer: the populated submodule follows
// it, so the repair's landing never carries the old pointer back over the target's change.
func TestSubmodule_ARepairMergeMovesThePopulatedSubmodule(t *testing.T) {
	t.Parallel()
	sup := newSuperproject(t)
	m := newTestManager(t)
	r := openRepo(t, m, sup.dir)
	ws := prepare(t, m, r, "rep", 1)
	writeFile(t, ws.Path, "s.txt", "agent\n")
	gitIn(t, ws.Path, "commit", "-qam", "agent")

	gitIn(t, filepath.Join(sup.dir, "lib"), "checkout", "-q", sup.c2)
	sup.write("s.txt", "person\n")
	sup.commitAll("person: lib at its second commit, s.txt")

	ws2, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "rep", Attempt: 2, StartPoint: ws.Branch, MergeTarget: true})
	require.NoError(t, err)
	require.Equal(t, []string{"s.txt"}, ws2.Conflicts)
	require.Equal(t, sup.c2, gitIn(t, filepath.Join(ws2.Path, "lib"), "rev-parse", "HEAD"))
	writeFile(t, ws2.Path, "s.txt", "both\n")
	l := land(t, m, r, ws2)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, sup.c2, strings.Fields(sup.git("ls-tree", "main", "lib"))[2], "the target's pointer survives the repair")
}

// A submodule outside a sparse checkout (skip-worktree) is neither populated nor noted.
func TestSubmodule_OutsideASparseCheckoutNothingIsPopulated(t *testing.T) {
	t.Parallel()
	sup := newSuperproject(t)
	sup.write("src/s.go", "package s\n")
	sup.commitAll("src")
	clone := filepath.Join(t.TempDir(), "clone")
	gitIn(t, sup.dir, "clone", "-q", "--no-checkout", sup.dir, clone)
	gitIn(t, clone, "sparse-checkout", "set", "--no-cone", "/src/")
	gitIn(t, clone, "checkout", "-q", "main")
	require.Contains(t, gitIn(t, clone, "ls-files", "-t", "lib"), "S lib", "lib is outside the sparse checkout")
	m := newTestManager(t)

	notes, err := m.moduleFill(ctxT(t), clone, filepath.Join(sup.dir, ".git"), 0)
	require.NoError(t, err)
	require.Empty(t, notes)
	require.NoDirExists(t, filepath.Join(clone, "lib"))
}
