package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitIn runs git in dir with the sandbox's environment and returns its trimmed output.
func gitInSandbox(t *testing.T, s *sandbox, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// sandboxRepo makes a repository at home/name with one commit on main, made with initArgs
// given to git init.
func sandboxRepo(t *testing.T, s *sandbox, name string, initArgs ...string) string {
	t.Helper()
	dir := filepath.Join(s.home, name)
	gitInSandbox(t, s, s.home, append(append([]string{"init", "-q", "-b", "main"}, initArgs...), dir)...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	gitInSandbox(t, s, dir, "add", "-A")
	gitInSandbox(t, s, dir, "commit", "-q", "-m", "start")
	return dir
}

// doctor tries a workspace in every configured repository and the default one (issue 29): one
// whose worktreeConfig go-git v5 refused (the default, via `git sparse-checkout set`) and one
// with `git config extensions.worktreeConfig true` are ok, each having made and removed a
// workspace on main; a detached HEAD is ok with a warning; a SHA-256 repository (go-git cannot
// read it), one with no commit and one whose extension git itself refuses fail on their own
// rows with what to do. Nothing is left behind: no workspace, no branch, no registration. On
// main at 3983e1f the worktreeConfig and SHA-256 rows said ok.
func TestDoctor_TriesAWorkspaceInEachRepository(t *testing.T) {
	s := newSandbox(t)
	s.git("sparse-checkout", "set", "--cone", "src")
	wtc := sandboxRepo(t, s, "worktreeconfig")
	gitInSandbox(t, s, wtc, "config", "extensions.worktreeConfig", "true")
	detached := sandboxRepo(t, s, "detached")
	gitInSandbox(t, s, detached, "checkout", "-q", "--detach")
	sha256 := sandboxRepo(t, s, "sha256", "--object-format=sha256")
	unborn := filepath.Join(s.home, "unborn")
	gitInSandbox(t, s, s.home, "init", "-q", "-b", "main", unborn)
	hooksPath := sandboxRepo(t, s, "hookspath")
	gitInSandbox(t, s, hooksPath, "config", "core.hooksPath", ".githooks")
	refused := sandboxRepo(t, s, "refused")
	gitInSandbox(t, s, refused, "config", "core.repositoryformatversion", "1")
	gitInSandbox(t, s, refused, "config", "extensions.frobnicate", "true")
	var cfg strings.Builder
	for _, p := range []string{wtc, detached, sha256, unborn, hooksPath} {
		cfg.WriteString("[[repositories]]\npath = \"" + p + "\"\n")
	}
	writeSandboxConfig(t, s, cfg.String())

	checks, code := doctorChecks(t, s)
	require.Equal(t, 1, code, "%+v", checks)
	def := checks["default repository"]
	require.True(t, def.OK, "%+v", def)
	require.Contains(t, def.Detail, "git checkout at "+s.repo+": a workspace on main (")
	require.Contains(t, def.Detail, "was made and removed in ")
	row := func(p string) check {
		c, ok := checks["repository "+p]
		require.True(t, ok, "a row for %s: %+v", p, checks)
		return c
	}
	require.True(t, row(wtc).OK, "%+v", row(wtc))
	require.Contains(t, row(wtc).Detail, "git checkout at "+wtc+": a workspace on main (")
	require.True(t, row(detached).OK, "%+v", row(detached))
	require.True(t, row(detached).Warn)
	require.Contains(t, row(detached).Detail, "HEAD detached: missions there must name a target branch (a snapshot of HEAD was made and removed")
	require.False(t, row(wtc).Warn, "the pre-receive hook is in place: %+v", row(wtc))
	require.True(t, row(hooksPath).OK, "%+v", row(hooksPath))
	require.True(t, row(hooksPath).Warn, "pushes into that checkout are not serialised with landings: %+v", row(hooksPath))
	require.Contains(t, row(hooksPath).Detail, "core.hooksPath is .githooks, where mcp-scheduler installs no hook")
	for p, want := range map[string][]string{
		sha256: {"git checkout at " + sha256 + ", but missions cannot get a workspace there: ", "extensions.objectformat = sha256",
			"use mcp-scheduler with a SHA-1 repository"},
		unborn: {"git checkout at " + unborn + ", but missions cannot get a workspace there: ", `unknown branch or commit: branch "main"`,
			"commit something on main first"},
	} {
		c := row(p)
		require.False(t, c.OK, "%+v", c)
		for _, w := range want {
			require.Contains(t, c.Detail, w)
		}
	}

	// A repository git refuses stops every command that opens the store (the default
	// repository's row is not made); its row says why and what to do.
	writeSandboxConfig(t, s, cfg.String()+"[[repositories]]\npath = \""+refused+"\"\n")
	checks, code = doctorChecks(t, s)
	require.Equal(t, 1, code, "%+v", checks)
	require.False(t, row(refused).OK)
	require.Contains(t, row(refused).Detail, "git refuses the repository at "+refused+" (fatal: unknown repository extension found:")
	require.Contains(t, row(refused).Detail, "frobnicate")
	require.Contains(t, row(refused).Detail, "run mcp-scheduler with the git that made it")
	require.True(t, row(wtc).OK, "%+v", row(wtc))

	for _, p := range []string{s.repo, wtc, detached} {
		require.Empty(t, gitInSandbox(t, s, p, "branch", "--list", "mcp-scheduler/*"), "%s: the throwaway branch is deleted", p)
		require.Equal(t, 1, strings.Count(gitInSandbox(t, s, p, "worktree", "list", "--porcelain"), "worktree "), "%s: only the checkout", p)
	}
	left, err := filepath.Glob(filepath.Join(s.dataDir, "worktrees", "*", "doctor-*"))
	require.NoError(t, err)
	require.Empty(t, left, "no throwaway workspace is left in the data dir")
}
