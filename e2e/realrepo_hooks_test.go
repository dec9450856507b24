package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// e2eHooks are the hooks bug case B64's repository tracks: pre-commit as the case has it, and
// the two that the scheduler's own commands would run if they ran hooks — post-checkout (`git
// worktree add` making the workspace) and post-merge (`git merge --ff-only` moving the person's
// checkout). The reference agent's own commit (`git commit --no-verify`) runs none of them.
var e2eHooks = []string{"pre-commit", "post-checkout", "post-merge"}

// TestRealRepo_HooksAndWorktreeConfig is bug case B64 end to end, with the built binary and the
// reference agent: the repository tracks .githooks (each hook appends `$(git rev-parse
// --show-toplevel)` to a log and touches HOOKRAN), core.hooksPath is the relative .githooks,
// extensions.worktreeConfig is on, and the person has an uncommitted wip.txt. `doctor` says the
// repository is ok (it makes and removes a workspace there); a mission writes a.txt, commits
// and lands on the checked-out main. No hook ran anywhere, wip.txt is intact, no config.worktree
// gained core.hooksPath. On main at 3983e1f the mission failed at its first dispatch ("go-git
// open …: core.repositoryformatversion does not support extension: worktreeconfig").
func TestRealRepo_HooksAndWorktreeConfig(t *testing.T) {
	root := privateTempDir(t)
	repo, data, log := filepath.Join(root, "repo"), filepath.Join(root, "data"), filepath.Join(root, "hooks.log")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".githooks"), 0o755))
	gitRun(t, repo, "init", "-q", "-b", "main")
	for _, h := range e2eHooks {
		script := "#!/bin/sh\necho \"$(git rev-parse --show-toplevel) " + h + "\" >> '" + log + "'\ntouch HOOKRAN\n"
		require.NoError(t, os.WriteFile(filepath.Join(repo, ".githooks", h), []byte(script), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte("hooks\n"), 0o644))
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "tracked hooks")
	gitRun(t, repo, "config", "core.hooksPath", ".githooks")
	gitRun(t, repo, "config", "extensions.worktreeConfig", "true")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "wip.txt"), []byte("the person's work in progress\n"), 0o644))

	cfg := filepath.Join(root, "config.toml")
	writeTOML(t, cfg, map[string]any{
		"log_level": "debug", "scheduler": map[string]any{"tick": "250ms"},
		"repositories": []map[string]any{{"path": repo}},
		"profiles": []map[string]any{{"name": "reference", "runtime": "ndjson", "command": []string{"{mcp_scheduler}", "reference-agent"},
			"env": []string{"PATH", "HOME", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_NOSYSTEM"}}},
	})
	env := append(testenv.GitEnv(), "PATH="+os.Getenv("PATH"), "HOME="+root, "NO_COLOR=1",
		"MCP_SCHEDULER_CONFIG="+cfg, "MCP_SCHEDULER_DATA_DIR="+data)

	doctor := exec.Command(binary, "doctor", "--json")
	doctor.Dir, doctor.Env = repo, env
	out, err := doctor.Output()
	require.NoError(t, err, "%s", out)
	var checks []struct {
		Name, Detail string
		OK           bool
	}
	require.NoError(t, json.Unmarshal(out, &checks), "%s", out)
	found := false
	for _, c := range checks {
		if c.Name == "repository "+repo {
			found = true
			require.True(t, c.OK, "%+v", c)
			require.Contains(t, c.Detail, "a workspace on main (")
		}
	}
	require.True(t, found, "a row for the repository: %s", out)

	ctx, cancel := context.WithTimeout(context.Background(), WorkTimeout(t))
	defer cancel()
	serverLog := filepath.Join(root, "server.stderr")
	c := startStdioClient(t, ctx, repo, env, serverLog)
	d := callTool(t, ctx, c, "dispatch", map[string]any{"title": "hooks", "missions": []map[string]any{
		{"key": "a", "title": "write a.txt", "brief": "@write a.txt 1\n@commit a\n@done wrote a.txt"}}})
	var dispatched struct {
		Voyage struct{ ID string }
		IDs    map[string]string
	}
	require.NoError(t, json.Unmarshal(d, &dispatched), "%s", d)
	var state string
	testenv.WaitForState(t, "the voyage to settle", func() bool {
		var vs struct{ Voyage struct{ State string } }
		require.NoError(t, json.Unmarshal(callTool(t, ctx, c, "voyage_status", map[string]any{"voyage_id": dispatched.Voyage.ID}), &vs))
		state = vs.Voyage.State
		return state != "" && state != "open" && state != "active"
	}, func() string {
		st, closeDB := openStore(t, data)
		defer closeDB()
		log, _ := os.ReadFile(serverLog)
		return fmt.Sprintf("state %q\n%s\nserver log:\n%s", state,
			dumpMissions(context.Background(), engine.New(st, engine.Options{})), tail(string(log), 20000))
	})
	require.NoError(t, c.Close())

	st, closeDB := openStore(t, data)
	defer closeDB()
	eng := engine.New(st, engine.Options{})
	bg := context.Background()
	require.Equal(t, "completed", state, dumpMissions(bg, eng))
	m, err := eng.GetMission(bg, dispatched.IDs["a"])
	require.NoError(t, err)
	require.Equal(t, domain.LandingLanded, m.Mission.Landing, dumpMissions(bg, eng))
	body, ok := showFile(t, repo, "main", "a.txt")
	require.True(t, ok)
	require.Equal(t, "1", strings.TrimSpace(body))
	require.Equal(t, "1", strings.TrimSpace(readText(t, filepath.Join(repo, "a.txt"))), "the person's checkout followed")
	require.Equal(t, "the person's work in progress\n", readText(t, filepath.Join(repo, "wip.txt")))
	require.Equal(t, "?? wip.txt", gitRun(t, repo, "status", "--porcelain"))

	var ran []string
	for _, dir := range []string{repo, data} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Name() == "HOOKRAN" {
				ran = append(ran, p)
			}
			return err
		}))
	}
	require.Empty(t, ran, "no hook ran")
	require.NoFileExists(t, log, "no hook ran")
	common := gitRun(t, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	wtConfigs, err := filepath.Glob(filepath.Join(common, "worktrees", "*", "config.worktree"))
	require.NoError(t, err)
	for _, p := range append(wtConfigs, filepath.Join(common, "config.worktree")) {
		if b, err := os.ReadFile(p); err == nil {
			require.NotContains(t, strings.ToLower(string(b)), "hookspath", p)
		}
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
