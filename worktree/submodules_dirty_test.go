package worktree

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Work an agent leaves uncommitted inside a populated submodule is not the superproject's to
// commit: the landing lands the superproject's own changes, keeps the pointer, and Remove
// without Force refuses the workspace (ErrWorkspaceDirty) rather than losing that work.
func TestSubmodule_UncommittedWorkInsideASubmoduleIsNotLandedNorLost(t *testing.T) {
	t.Parallel()
	sup := newSuperproject(t)
	m := newTestManager(t)
	r := openRepo(t, m, sup.dir)
	ws := prepare(t, m, r, "dirty", 1)
	writeFile(t, filepath.Join(ws.Path, "lib"), "l.txt", "edited inside the submodule\n")
	writeFile(t, ws.Path, "a.txt", "a\n")

	l := land(t, m, r, ws)
	require.Equal(t, LandLanded, l.Status)
	require.Equal(t, []string{"a.txt"}, l.ChangedFiles)
	require.Equal(t, "160000 commit "+sup.c1+"\tlib", sup.git("ls-tree", "main", "lib"))
	err := m.Remove(ctxT(t), ws, RemoveOptions{})
	require.True(t, errors.Is(err, ErrWorkspaceDirty), "%v", err)
	require.Equal(t, "edited inside the submodule\n", readFile(t, filepath.Join(ws.Path, "lib"), "l.txt"))
}
