package dashboard_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// startScheduled is start with a running scheduler loop over a real git repository: real
// worktrees and real reference-agent processes (this test binary plays the agent, TestMain),
// as serve runs them.
func startScheduled(t *testing.T, token string) *fixture {
	t.Helper()
	dir, repo := t.TempDir(), makeRepo(t)
	st := teststore.OpenAt(t, teststore.LocationIn(dir))
	eng := engine.New(st, engine.Options{DefaultRepository: repo, LeaseTTL: 20 * time.Second,
		Backoff: engine.Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: 0.1}})
	wt, err := worktree.NewManager(worktree.Config{DataDir: dir})
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	run, err := runner.New(runner.Config{Self: self, DataDir: dir})
	require.NoError(t, err)
	ref := agent.Profile{Name: "ref", Runtime: agent.RuntimeNDJSON, Command: []string{"{mcp_scheduler}", refagent.Subcommand},
		Env: []string{"PATH", "HOME", "GIT_CONFIG_NOSYSTEM"}, MaxConcurrency: 2}
	s, err := scheduler.New(eng, wt, run, scheduler.Config{DataDir: dir, Tick: 50 * time.Millisecond, MaxConcurrency: 2,
		CleanupEvery: -1, Profiles: []agent.Profile{ref}})
	require.NoError(t, err)
	f := serve(t, token, dir, tools.Deps{Engine: eng, Logs: tools.FileLogs{DataDir: dir}})
	require.NoError(t, s.Start(f.ctx))
	t.Cleanup(func() {
		require.NoError(t, s.Stop(context.Background()))
		require.NoError(t, run.Close())
		require.NoError(t, wt.Close())
	})
	return f
}

// makeRepo is a git repository with one commit on main.
func makeRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# sample\n"), 0o644))
	git("add", "-A")
	git("commit", "-q", "-m", "initial")
	return dir
}
