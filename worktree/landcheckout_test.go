package worktree

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Landing onto a target branch a person has checked out: it is only ever changed the way their
// own `git merge --ff-only` would change it.

func TestLand_TargetCheckedOutCleanIsFastForwardedThere(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "a.txt", "A\n")
	tr.write("p.txt", "person\n")
	tr.commitAll("person") // forces a merge commit, then a fast-forward of the checkout

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, r.Root(), l.Checkout)
	require.Equal(t, l.Commit, tr.git("rev-parse", "HEAD"))
	require.Equal(t, "A\n", readFile(t, tr.dir, "a.txt"))
	require.Empty(t, tr.git("status", "--porcelain"))
	require.Equal(t, "main", tr.git("branch", "--show-current"))
}

func TestLand_TargetCheckedOutDirtyElsewhereKeepsPersonsChanges(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", "mine.txt": "mine\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "a.txt", "A\n")
	tr.write("mine.txt", "person's unsaved edit\n")
	tr.write("scratch.txt", "untracked\n")

	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, "A\n", readFile(t, tr.dir, "a.txt"))
	require.Equal(t, "person's unsaved edit\n", readFile(t, tr.dir, "mine.txt"))
	require.Equal(t, "untracked\n", readFile(t, tr.dir, "scratch.txt"))
}

func TestLand_TargetCheckedOutDirtySameFileWaits(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "a.txt", "mission\n")
	writeFile(t, ws.Path, "new.txt", "mission adds\n")
	tr.write("a.txt", "person's unsaved edit\n")
	tr.write("new.txt", "person's untracked file\n")
	before := tr.tip("main")

	l := land(t, m, r, ws)

	require.Equal(t, LandWaiting, l.Status)
	require.Equal(t, r.Root(), l.Checkout)
	require.ElementsMatch(t, []string{"a.txt", "new.txt"}, l.BlockingFiles)
	require.Contains(t, l.Detail, "would be overwritten")
	require.Equal(t, before, tr.tip("main"), "nothing moves")
	require.Equal(t, "person's unsaved edit\n", readFile(t, tr.dir, "a.txt"))

	tr.git("checkout", "--", "a.txt")
	l = land(t, m, r, ws)
	require.Equal(t, LandWaiting, l.Status)
	require.Equal(t, []string{"new.txt"}, l.BlockingFiles, "an untracked file in the way blocks too")

	require.NoError(t, os.Remove(filepath.Join(tr.dir, "new.txt")))
	l = land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, "mission\n", readFile(t, tr.dir, "a.txt"))
}

// What a fast-forward killed half-way leaves in the person's checkout: the new files written
// (untracked) and modified files rewritten, the index not updated. Files already holding
// exactly the landed content do not block; a file with other content still does.
func TestLand_FilesAlreadyHoldingTheLandedContentDoNotBlock(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt text eol=crlf\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "a.txt", "A\r\n")
	writeFile(t, ws.Path, "new dir/ü.txt", "new\r\n")
	tr.write("a.txt", "A\r\n")           // same content as incoming
	tr.write("new dir/ü.txt", "other\n") // different: blocks

	l := land(t, m, r, ws)
	require.Equal(t, LandWaiting, l.Status)
	require.ElementsMatch(t, []string{"a.txt", "new dir/ü.txt"}, l.BlockingFiles)
	require.Equal(t, "other\n", readFile(t, tr.dir, "new dir/ü.txt"))
	require.Equal(t, "A\r\n", readFile(t, tr.dir, "a.txt"), "set-aside files are put back")

	tr.write("new dir/ü.txt", "new\r\n") // now identical too
	l = land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, l.Commit, tr.git("rev-parse", "HEAD"))
	require.Empty(t, tr.git("status", "--porcelain"))
	entries, err := os.ReadDir(filepath.Join(m.Config().DataDir, "tmp"))
	require.NoError(t, err)
	require.Empty(t, entries)
}

// A fast-forward killed while git wrote a file leaves it empty or cut short. Such a file holds
// the first bytes of what lands and does not block the next landing; a file that differs
// anywhere (even one as long as the landed content) still does. (The SIGKILL crash test met
// the empty file: git had created it and was killed before writing.)
func TestLand_FilesCutShortByAKilledFastForwardDoNotBlock(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{"a.txt": "a\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "empty.txt", "written later\n")
	writeFile(t, ws.Path, "cut.txt", "the whole line\n")
	writeFile(t, ws.Path, "other.txt", "the landed text\n")
	tr.write("empty.txt", "")
	tr.write("cut.txt", "the wh")
	tr.write("other.txt", "the person's!!!\n")

	l := land(t, m, r, ws)
	require.Equal(t, LandWaiting, l.Status)
	require.ElementsMatch(t, []string{"empty.txt", "cut.txt", "other.txt"}, l.BlockingFiles)
	require.Equal(t, "the wh", readFile(t, tr.dir, "cut.txt"), "set-aside files are put back")
	require.Equal(t, "the person's!!!\n", readFile(t, tr.dir, "other.txt"))

	require.NoError(t, os.Remove(filepath.Join(tr.dir, "other.txt")))
	l = land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, "the whole line\n", readFile(t, tr.dir, "cut.txt"))
	require.Equal(t, "written later\n", readFile(t, tr.dir, "empty.txt"))
	require.Empty(t, tr.git("status", "--porcelain"))
}
