package worktree

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// hookNames are the hooks the commands of a workspace's life could run: creating it (`git
// worktree add`: post-checkout), committing in it (pre-commit … post-commit), landing
// (merge commits, `git merge --ff-only` in the person's checkout: post-merge), every ref
// update (reference-transaction), and removing it.
var hookNames = []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
	"pre-merge-commit", "post-merge", "post-rewrite", "reference-transaction"}

// hookedRepo is bug case B64's repository: it tracks .githooks/<hook> for every hookNames
// entry, each appending `$(git rev-parse --show-toplevel) <hook>` to log and touching HOOKRAN
// where it runs; core.hooksPath is the relative .githooks and extensions.worktreeConfig is on;
// wip.txt is the person's uncommitted file.
func hookedRepo(t *testing.T, log string) *testRepo {
	t.Helper()
	tr := newTestRepo(t, map[string]string{"README.md": "hello\n"})
	for _, h := range hookNames {
		p := filepath.Join(tr.dir, ".githooks", h)
		tr.write(filepath.Join(".githooks", h), "#!/bin/sh\necho \"$(git rev-parse --show-toplevel) "+h+"\" >> '"+log+"'\ntouch HOOKRAN\n")
		require.NoError(t, os.Chmod(p, 0o755))
	}
	tr.commitAll("hooks") // --no-verify, and core.hooksPath is not set yet
	tr.git("config", "core.hooksPath", ".githooks")
	tr.git("config", "extensions.worktreeConfig", "true")
	tr.write("wip.txt", "the person's work in progress\n")
	return tr
}

// hookRuns lists every HOOKRAN under the given directories.
func hookRuns(t *testing.T, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.Name() == "HOOKRAN" {
				found = append(found, p)
			}
			return nil
		})
		require.NoError(t, err)
	}
	return found
}

// requireNoHooksPathInWorktreeConfig checks every config.worktree under the common dir (the
// main worktree's and each linked one's): none names core.hooksPath.
func requireNoHooksPathInWorktreeConfig(t *testing.T, commonDir string) {
	t.Helper()
	for p, text := range configWorktreeFiles(t, commonDir) {
		require.NotContains(t, strings.ToLower(text), "hookspath", "%s", p)
	}
}

// TestLand_HooksNeverRunInWorkspacesOrTheCheckout is bug case B64: with a relative
// core.hooksPath whose hooks the repository tracks, and extensions.worktreeConfig on, a
// mission writes a.txt, commits and lands (a merge, since another mission landed first, then
// the fast-forward of the person's checkout). The landing lands; no hook ran anywhere (our git
// commands run with core.hooksPath=/dev/null, docs/workspaces.md "Hooks"); wip.txt is intact;
// no config.worktree gained a core.hooksPath. Then the person's own `git commit` runs the
// hook: the trap was armed. On main at 3983e1f Open failed (go-git refused worktreeConfig).
func TestLand_HooksNeverRunInWorkspacesOrTheCheckout(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "hooks.log")
	tr := hookedRepo(t, log)
	m := newTestManager(t)
	r := openRepo(t, m, tr.dir)
	first := prepare(t, m, r, "first", 1)
	ws := prepare(t, m, r, "hooked", 1)
	requireNoHooksPathInWorktreeConfig(t, r.CommonDir())

	writeFile(t, first.Path, "b.txt", "b\n")
	require.Equal(t, LandLanded, land(t, m, r, first).Status)
	writeFile(t, ws.Path, "a.txt", "1\n")
	commit, changed, err := m.CommitPending(ctxT(t), ws, "a")
	require.NoError(t, err)
	require.True(t, changed)
	requireNoHooksPathInWorktreeConfig(t, r.CommonDir())
	l := land(t, m, r, ws)

	require.Equal(t, LandLanded, l.Status, l.Detail)
	require.Equal(t, r.Root(), l.Checkout)
	require.True(t, isAncestor(t, tr.dir, commit, "main"))
	require.Equal(t, l.Commit, tr.git("rev-parse", "HEAD"), "the person's checkout followed")
	require.Equal(t, "1\n", readFile(t, tr.dir, "a.txt"))
	require.Equal(t, "b\n", readFile(t, tr.dir, "b.txt"))
	require.Equal(t, "the person's work in progress\n", readFile(t, tr.dir, "wip.txt"))
	require.Equal(t, "?? wip.txt", tr.git("status", "--porcelain"))
	requireNoHooksPathInWorktreeConfig(t, r.CommonDir())
	_, err = m.Cleanup(ctxT(t), CleanupRequest{Repo: r, OlderThan: 1})
	require.NoError(t, err)
	require.Empty(t, hookRuns(t, tr.dir, m.Config().DataDir), "no hook ran")
	require.NoFileExists(t, log, "no hook ran")
	requireNoHooksPathInWorktreeConfig(t, r.CommonDir())

	tr.git("add", "wip.txt")
	tr.git("commit", "-q", "-m", "the person's own commit")
	require.FileExists(t, filepath.Join(tr.dir, "HOOKRAN"), "the person's commit runs the repository's hooks")
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Contains(t, string(b), tr.dir+" pre-commit")
}
