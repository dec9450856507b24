package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/stretchr/testify/require"
)

// Repositories with extensions.* set (issue 29): every repository git accepts opens, prepares,
// lands and cleans up, unless an extension changes how objects or refs are stored, which is a
// typed ErrUnsupportedExtension naming it and what to do.

// configWorktreeFiles reads every config.worktree under the common dir: the main worktree's
// and each linked worktree's (worktrees/<name>/config.worktree), by path.
func configWorktreeFiles(t *testing.T, commonDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	paths, err := filepath.Glob(filepath.Join(commonDir, "worktrees", "*", "config.worktree"))
	require.NoError(t, err)
	for _, p := range append(paths, filepath.Join(commonDir, "config.worktree")) {
		if b, err := os.ReadFile(p); err == nil {
			out[p] = string(b)
		}
	}
	return out
}

// TestExtensions_WorktreeConfigRepositoriesPrepareLandAndCleanUp: with extensions.worktreeConfig
// turned on by `git config` or by `git sparse-checkout set`, a workspace is prepared, landed
// onto the checked-out target (the person's checkout fast-forwards) and onto a branch nobody
// has checked out, and both are cleaned up; no config.worktree is written. On main at 3983e1f
// Open failed: "go-git open …: core.repositoryformatversion does not support extension:
// worktreeconfig".
func TestExtensions_WorktreeConfigRepositoriesPrepareLandAndCleanUp(t *testing.T) {
	t.Parallel()
	for name, turnOn := range map[string]func(tr *testRepo){
		"git config": func(tr *testRepo) {
			tr.git("config", "extensions.worktreeConfig", "true")
			tr.git("config", "--worktree", "user.name", "Person in this worktree")
		},
		"sparse-checkout set": func(tr *testRepo) {
			tr.git("sparse-checkout", "set", "--cone", "src")
			require.Equal(t, "true", tr.git("config", "extensions.worktreeConfig"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr := newTestRepo(t, map[string]string{"README.md": "hello\n", "src/main.go": "package main\n"})
			tr.git("branch", "release")
			turnOn(tr)
			m := newTestManager(t, func(c *Config) { c.Retention = time.Nanosecond })
			r := openRepo(t, m, tr.dir)
			_, reindexes := r.gg.Storer.(interface{ Reindex() })
			require.True(t, reindexes, "reads retried after the person's gc re-index go-git's packs (Repo.read)")
			before := configWorktreeFiles(t, r.CommonDir())

			ws := prepare(t, m, r, "checked", 1)
			writeFile(t, ws.Path, "a.txt", "a\n")
			l := land(t, m, r, ws)
			require.Equal(t, LandLanded, l.Status, l.Detail)
			require.Equal(t, r.Root(), l.Checkout, "the person's checkout followed")
			require.Equal(t, "a\n", readFile(t, tr.dir, "a.txt"))
			require.Equal(t, l.Commit, tr.git("rev-parse", "HEAD"))

			other, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "release", Attempt: 1, TargetBranch: "release"})
			require.NoError(t, err)
			writeFile(t, other.Path, "src/r.go", "package main // release\n")
			l, err = m.Land(ctxT(t), LandRequest{Repo: r, MissionID: "release", Attempt: 1, Workspace: other})
			require.NoError(t, err)
			require.Equal(t, LandLanded, l.Status, l.Detail)
			require.Empty(t, l.Checkout, "nobody has release checked out")
			require.Equal(t, "package main // release\n", tr.git("show", "release:src/r.go")+"\n")
			require.NoFileExists(t, filepath.Join(tr.dir, "src", "r.go"), "main's checkout is not release's")

			rep, err := m.Cleanup(ctxT(t), CleanupRequest{Repo: r})
			require.NoError(t, err)
			require.ElementsMatch(t, []string{"checked", "release"}, missions(rep.Removed), "kept: %+v", rep.Kept)
			for _, p := range []string{ws.Path, other.Path} {
				require.NoDirExists(t, p)
			}
			require.Equal(t, before, configWorktreeFiles(t, r.CommonDir()), "no config.worktree was written")
			require.Empty(t, tr.git("status", "--porcelain"))
			fsckClean(t, tr.dir)
		})
	}
}

// A linked worktree of a worktreeConfig repository opens too (go-git reads the common dir's
// config through the linked worktree's git dir).
func TestExtensions_LinkedWorktreeOfAWorktreeConfigRepositoryOpens(t *testing.T) {
	t.Parallel()
	tr := newTestRepo(t, nil)
	tr.git("config", "extensions.worktreeConfig", "true")
	linked := filepath.Join(t.TempDir(), "linked")
	tr.git("worktree", "add", "-q", "-b", "side", linked)
	gitIn(t, linked, "config", "--worktree", "core.sparseCheckout", "false")
	m := newTestManager(t)
	r := openRepo(t, m, linked)
	ws, err := m.Prepare(ctxT(t), PrepareRequest{Repo: r, MissionID: "m", Attempt: 1})
	require.NoError(t, err)
	require.Equal(t, "side", ws.TargetBranch)
}

// Extensions git accepts and that leave objects and refs as go-git reads them open; those in a
// format-0 repository that git ignores open too.
func TestExtensions_HarmlessExtensionsOpen(t *testing.T) {
	t.Parallel()
	for name, kv := range map[string][][2]string{
		"preciousObjects, v0":      {{"extensions.preciousObjects", "true"}},
		"everything harmless, v1":  {{"core.repositoryformatversion", "1"}, {"extensions.worktreeConfig", "true"}, {"extensions.preciousObjects", "true"}, {"extensions.noop", "x"}, {"extensions.objectFormat", "sha1"}},
		"unknown to git, v0":       {{"extensions.refStorage", "reftable"}, {"extensions.frobnicate", "1"}},
		"mixed case names, v1":     {{"core.repositoryformatversion", "1"}, {"extensions.WorkTreeConfig", "true"}},
		"worktreeConfig false, v0": {{"extensions.worktreeConfig", "false"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr := newTestRepo(t, nil)
			for _, e := range kv {
				tr.git("config", "-f", filepath.Join(tr.dir, ".git", "config"), e[0], e[1])
			}
			m := newTestManager(t)
			r := openRepo(t, m, tr.dir)
			ws := prepare(t, m, r, "m", 1)
			writeFile(t, ws.Path, "a.txt", "a\n")
			require.Equal(t, LandLanded, land(t, m, r, ws).Status)
		})
	}
}

// Extensions that change how objects or refs are stored, and those the git CLI itself refuses,
// are an ErrUnsupportedExtension naming the extension and what to do, at Open: nothing is
// created, and the error is the same every time (no retry can help).
func TestExtensions_UnreadableExtensionsAreTypedErrors(t *testing.T) {
	t.Parallel()
	sha256 := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "repo")
		out, err := gitTry(t.TempDir(), "init", "-q", "-b", "main", "--object-format=sha256", dir)
		require.NoError(t, err, out)
		writeFile(t, dir, "a.txt", "a\n")
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-q", "-m", "sha256")
		return dir
	}
	withConfig := func(kv ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			tr := newTestRepo(t, nil)
			for i := 0; i < len(kv); i += 2 {
				tr.git("config", "-f", filepath.Join(tr.dir, ".git", "config"), kv[i], kv[i+1])
			}
			return tr.dir
		}
	}
	for name, c := range map[string]struct {
		repo func(t *testing.T) string
		want []string
	}{
		"sha256": {sha256, []string{"extensions.objectformat = sha256", "knows only SHA-1", "use mcp-scheduler with a SHA-1 repository"}},
		"partial clone": {withConfig("core.repositoryformatversion", "1", "extensions.partialClone", "origin"),
			[]string{"extensions.partialClone = origin", "partial clone", "full clone (git clone without --filter)"}},
		"partial clone, v0": {withConfig("extensions.partialClone", "origin"), []string{"extensions.partialClone = origin"}},
		"unknown to git, v1": {withConfig("core.repositoryformatversion", "1", "extensions.zzz", "1", "extensions.qqq", "2"),
			[]string{"extensions.zzz, extensions.qqq", `the git CLI refuses the repository ("unknown repository extensions found")`, "run mcp-scheduler with a git that knows the extension"}},
		"v1-only in v0": {withConfig("extensions.objectFormat", "sha256"),
			[]string{"extensions.objectformat", "set core.repositoryformatversion = 1 if the extension is meant"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := c.repo(t)
			m := newTestManager(t)
			for range 2 {
				_, err := m.Open(dir)
				require.ErrorIs(t, err, ErrUnsupportedExtension)
				var xe *ExtensionError
				require.True(t, errors.As(err, &xe), "%v", err)
				for _, w := range c.want {
					require.Contains(t, err.Error(), w)
				}
				require.NotContains(t, err.Error(), "go-git open")
			}
			entries, err := os.ReadDir(filepath.Join(m.Config().DataDir, "worktrees"))
			require.NoError(t, err)
			require.Empty(t, entries, "nothing was created")
		})
	}
}

// classifyExtensions on configurations git would accept with a newer git: reftable refs are
// refused with how to convert them, the files ref store is fine.
func TestExtensions_ClassifyRefStorage(t *testing.T) {
	t.Parallel()
	parse := func(text string) *config.Config {
		cfg, err := config.ReadConfig(strings.NewReader(text))
		require.NoError(t, err)
		return cfg
	}
	_, err := classifyExtensions("/r", parse("[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefStorage = reftable\n"))
	require.ErrorIs(t, err, ErrUnsupportedExtension)
	require.Contains(t, err.Error(), "extensions.refStorage = reftable")
	require.Contains(t, err.Error(), "git refs migrate --ref-format=files")
	hide, err := classifyExtensions("/r", parse("[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefStorage = files\n\tworktreeConfig = true\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"refStorage", "worktreeConfig"}, hide)
}
