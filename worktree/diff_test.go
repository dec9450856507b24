package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiff_FilesWithRenamesAndAUnifiedPatch(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("stable line\n", 30)
	tr := newTestRepo(t, map[string]string{"keep.txt": "1\n2\n", "old.txt": body, "del.txt": "bye\n"})
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	ws := prepare(t, m, r, "m", 1)
	writeFile(t, ws.Path, "keep.txt", "1\nTWO\n")
	writeFile(t, ws.Path, "added.txt", "hi\n")
	gitIn(t, ws.Path, "mv", "old.txt", "renamed.txt")
	gitIn(t, ws.Path, "rm", "-q", "del.txt")
	commit, changed, err := m.CommitPending(ctxT(t), ws, "work")
	require.NoError(t, err)
	require.True(t, changed)

	d, err := m.Diff(ctxT(t), r, ws.BaseCommit, ws.Branch)
	require.NoError(t, err)

	require.Equal(t, ws.BaseCommit, d.From)
	require.Equal(t, commit, d.To)
	require.Equal(t, []FileChange{
		{Path: "added.txt", Action: FileAdded},
		{Path: "del.txt", Action: FileDeleted},
		{Path: "keep.txt", Action: FileModified},
		{Path: "renamed.txt", OldPath: "old.txt", Action: FileRenamed},
	}, d.Files)
	require.Contains(t, d.Patch, "-2\n+TWO\n")
	require.Contains(t, d.Patch, "+++ b/added.txt")
	require.False(t, d.Truncated)

	same, err := m.Diff(ctxT(t), r, "main", ws.BaseCommit[:8])
	require.NoError(t, err)
	require.Empty(t, same.Files)
	_, err = m.Diff(ctxT(t), r, "no-such-branch", "main")
	require.ErrorIs(t, err, ErrUnknownRef)
}

// changedPaths (used for ChangedFiles and write areas) must agree with git itself, including
// a file replaced by a directory, a mode change, deep paths and deletions of whole trees.
func TestChangedPaths_AgreesWithGit(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, map[string]string{
		"a/b/c/deep.txt": "d\n", "a/keep.txt": "k\n", "thing": "file\n", "tree/x.txt": "x\n",
		"tree/sub/y.txt": "y\n", "script.sh": "echo\n", "same.txt": "same\n",
	})
	base := tr.tip("main")
	tr.write("a/b/c/deep.txt", "D\n")
	require.NoError(t, os.Remove(filepath.Join(tr.dir, "thing")))
	tr.write("thing/inside.txt", "now a directory\n")
	require.NoError(t, os.RemoveAll(filepath.Join(tr.dir, "tree")))
	require.NoError(t, os.Chmod(filepath.Join(tr.dir, "script.sh"), 0o755))
	tr.write("new/dir/file.txt", "n\n")
	tip := tr.commitAll("changes")
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)

	got, err := r.changedPaths(ctxT(t), base, tip)
	require.NoError(t, err)

	want := strings.Split(tr.git("-c", "core.quotePath=false", "diff", "--no-renames", "--name-only", base, tip), "\n")
	require.ElementsMatch(t, want, got)
	back, err := r.changedPaths(ctxT(t), tip, base)
	require.NoError(t, err)
	require.ElementsMatch(t, want, back)
	none, err := r.changedPaths(ctxT(t), tip, tip)
	require.NoError(t, err)
	require.Empty(t, none)
}
