package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/modelserver"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// The in-process harness: the scheduler loop (engine/scheduler) over a real SQLite file, a
// real repository and real worktrees, launching managed agents through the runner with the
// built binary as its shim. The tests of realagents_*_test.go run the real Claude Code and
// Codex CLIs through it.

// apiKey is the dummy key the agents present to the model server.
const apiKey = "sk-e2e-test-0123456789"

// perTurn is the usage every scripted model turn reports.
var perTurn = modelserver.Usage{InputTokens: 100, OutputTokens: 20}

// loopHarness is one scheduler with its parts, started in the background.
type loopHarness struct {
	t    *testing.T
	ctx  context.Context
	repo string
	data string
	st   engine.Store
	eng  *engine.Engine
	wt   *worktree.Manager
	run  *runner.Runner
	s    *scheduler.Scheduler
	logs *testenv.SyncBuffer
}

// newLoopHarness starts a scheduler over a fresh repository with the given profiles. The
// server's environment (what profiles' env and secret_env read) is PATH plus extraEnv, never
// the test process's own variables.
func newLoopHarness(t *testing.T, profiles []agent.Profile, extraEnv ...string) *loopHarness {
	t.Helper()
	return newLoopHarnessWith(t, profiles, nil, extraEnv...)
}

// newLoopHarnessWith is newLoopHarness with tune applied to the scheduler's configuration
// (nil: none).
func newLoopHarnessWith(t *testing.T, profiles []agent.Profile, tune func(*scheduler.Config), extraEnv ...string) *loopHarness {
	t.Helper()
	h := &loopHarness{t: t, ctx: context.Background(), repo: newRepo(t), data: privateTempDir(t), logs: &testenv.SyncBuffer{}}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var err error
	h.st, err = teststore.Open(h.ctx, filepath.Join(h.data, "mcp-scheduler.db"))
	require.NoError(t, err)
	h.eng = engine.New(h.st, engine.Options{DefaultRepository: h.repo, LeaseTTL: 30 * time.Second,
		Backoff: engine.Backoff{Initial: 100 * time.Millisecond, Max: 500 * time.Millisecond, Jitter: 0.1}, Logger: log})
	h.wt, err = worktree.NewManager(worktree.Config{DataDir: h.data, Logger: log})
	require.NoError(t, err)
	environ := append([]string{"PATH=" + os.Getenv("PATH")}, extraEnv...)
	h.run, err = runner.New(runner.Config{Self: binary, DataDir: h.data, Logger: log, Environ: func() []string { return environ }})
	require.NoError(t, err)
	cfg := scheduler.Config{DataDir: h.data, Tick: 100 * time.Millisecond,
		MaxConcurrency: 4, Profiles: profiles, StopAgentsOnShutdown: true, Logger: log}
	if tune != nil {
		tune(&cfg)
	}
	h.s, err = scheduler.New(h.eng, h.wt, h.run, cfg)
	require.NoError(t, err)
	require.NoError(t, h.s.Start(h.ctx))
	t.Cleanup(func() {
		require.NoError(t, h.s.Stop(context.Background()))
		require.NoError(t, h.run.Close())
		require.NoError(t, h.wt.Close())
		require.NoError(t, h.st.Close())
		if t.Failed() {
			t.Logf("scheduler log:\n%s", tail(h.logs.String(), 20000))
		}
	})
	return h
}

// dispatch dispatches a voyage in the harness's repository.
func (h *loopHarness) dispatch(spec engine.VoyageSpec) engine.Dispatched {
	h.t.Helper()
	d, err := h.eng.Dispatch(h.ctx, spec, "test")
	require.NoError(h.t, err)
	h.s.Wake()
	return d
}

// until polls cond until it holds, failing with a dump of the missions at the test binary's
// deadline.
func (h *loopHarness) until(what string, cond func() bool) {
	h.t.Helper()
	testenv.WaitForState(h.t, what, cond, func() string { return "\n" + dumpMissions(h.ctx, h.eng) })
}

func (h *loopHarness) voyage(id string) engine.VoyageDetail {
	h.t.Helper()
	d, err := h.eng.VoyageStatus(h.ctx, id)
	require.NoError(h.t, err)
	return d
}

func (h *loopHarness) mission(id string) engine.MissionDetail {
	h.t.Helper()
	d, err := h.eng.GetMission(h.ctx, id)
	require.NoError(h.t, err)
	return d
}

// settled reports whether the voyage left open/active.
func (h *loopHarness) settled(id string) bool {
	switch h.voyage(id).Voyage.State {
	case domain.VoyageCompleted, domain.VoyageBlocked, domain.VoyageCancelled:
		return true
	}
	return false
}

// claudeProfile is a claude-code profile against srv: the endpoint in set_env, the key in
// secret_env (read from the server's environment), the CLI's own retries off so an API
// error ends the attempt at once.
func claudeProfile(t *testing.T, srv *modelserver.Server) agent.Profile {
	zero := 0
	return agent.Profile{Name: "claude", Runtime: agent.RuntimeClaudeCode, Command: []string{testenv.NodeBin(t, "claude")},
		Env: []string{"PATH"}, SecretEnv: []string{"ANTHROPIC_API_KEY"}, SetEnv: map[string]string{"ANTHROPIC_BASE_URL": srv.URL()},
		MaxRetries: &zero, MaxConcurrency: 4, HardTimeout: agent.Duration(2 * time.Minute)}
}

// codexProfile is a codex profile against srv (workspace-write sandbox, the default).
func codexProfile(t *testing.T, srv *modelserver.Server) agent.Profile {
	zero := 0
	testenv.LookPath(t, "node") // codex's launcher is a node script
	return agent.Profile{Name: "codex", Runtime: agent.RuntimeCodex, Command: []string{testenv.NodeBin(t, "codex")},
		Env: []string{"PATH"}, SecretEnv: []string{"OPENAI_API_KEY"}, SetEnv: map[string]string{"OPENAI_BASE_URL": srv.OpenAIBaseURL()},
		Models: []string{"gpt-5.5"}, MaxRetries: &zero, MaxConcurrency: 4, ExtraArgs: []string{"--ephemeral"},
		HardTimeout: agent.Duration(2 * time.Minute)}
}

// failFirst answers the first model request with HTTP status, then as next does.
func failFirst(status int, next modelserver.Script) modelserver.Script {
	var mu sync.Mutex
	failed := false
	return func(r *modelserver.Request) modelserver.Turn {
		mu.Lock()
		first := !failed
		failed = true
		mu.Unlock()
		if first {
			return modelserver.Fail(status)
		}
		return next(r)
	}
}

// newRepo creates a repository with one commit on main, checked out nowhere else.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := privateTempDir(t)
	gitRun(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# sample\n"), 0o644))
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// privateTempDir is t.TempDir with symlinks resolved (macOS /var → /private/var), so paths
// compare equal to what git and the agents report.
func privateTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// gitRun runs git in dir with the tests' fixed identity and returns its trimmed output.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitOut(dir, args...)
	require.NoError(t, err, "git %v: %s", args, out)
	return out
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), testenv.GitEnv()...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// showFile returns path at the tip of branch, ok=false when it is absent there.
func showFile(t *testing.T, repo, branch, path string) (string, bool) {
	t.Helper()
	cmd := exec.Command("git", "-C", repo, "show", branch+":"+path)
	out, err := cmd.Output()
	return string(out), err == nil
}

// dumpMissions describes every mission, for a failing test.
func dumpMissions(ctx context.Context, eng *engine.Engine) string {
	var b strings.Builder
	ms, _ := eng.ListMissions(ctx, engine.MissionFilter{Limit: 1000})
	for _, m := range ms {
		fmt.Fprintf(&b, "%s key=%s state=%s landing=%s attempt=%d kind=%s title=%q", m.ID, m.Key, m.State, m.Landing, m.Attempt, m.Kind, m.Title)
		if m.Decision != nil {
			fmt.Fprintf(&b, " decision=%s (%s)", m.Decision.Kind, m.Decision.Reason)
		}
		if m.LastFailure != nil {
			fmt.Fprintf(&b, " failure=%s: %s", m.LastFailure.Kind, m.LastFailure.Summary)
		}
		if why, err := eng.Explain(ctx, m.ID); err == nil && len(why) > 0 {
			fmt.Fprintf(&b, " why=%s", why[0].Message)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// decode unmarshals raw JSON into v, failing the test.
func decode(t *testing.T, raw []byte, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(raw, v), "%s", raw)
}
