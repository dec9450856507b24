package scheduler_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/runner"
	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// TestMain lets the test binary play our binary's hidden subcommands (the agent shim and the
// reference agent), so tests run real child processes without a prebuilt binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case runner.ShimSubcommand:
			os.Exit(runner.ShimMain(os.Args[2:]))
		case refagent.Subcommand:
			os.Exit(refagent.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		case "create-mission": // BenchmarkWakeUpCrossProcess: <db> <repo> <write area>
			os.Exit(createMissionProcess(os.Args[2], os.Args[3], os.Args[4]))
		case crashSchedulerCmd: // TestB13_*: <data dir> <repo> <stage>
			os.Exit(crashSchedulerProcess(os.Args[2], os.Args[3], os.Args[4]))
		}
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	for _, kv := range testenv.GitEnv() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	goleak.VerifyTestMain(m)
}

// harness is one scheduler over a real repository, a real SQLite file, real worktrees and
// real reference-agent processes.
type harness struct {
	t    testing.TB
	ctx  context.Context
	repo string
	data string
	st   engine.Store
	eng  *engine.Engine
	wt   *worktree.Manager
	run  *runner.Runner
	s    *scheduler.Scheduler
}

type option func(*engine.Options, *scheduler.Config)

func refProfile(name string, personas ...string) agent.Profile {
	return agent.Profile{Name: name, Runtime: agent.RuntimeNDJSON, Command: []string{"{mcp_scheduler}", refagent.Subcommand},
		Env: []string{"PATH", "HOME", "GORACE", "GIT_CONFIG_NOSYSTEM"}, Personas: personas, MaxConcurrency: 4}
}

func newHarness(t testing.TB, opts ...option) *harness {
	t.Helper()
	return newHarnessWith(t, worktree.Config{}, opts...)
}

// newHarnessWith is newHarness with the workspace manager's configuration (its DataDir is the
// harness's).
func newHarnessWith(t testing.TB, wcfg worktree.Config, opts ...option) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), repo: makeRepo(t), data: t.TempDir()}
	var err error
	h.st, err = teststore.Open(h.ctx, teststore.LocationIn(h.data))
	require.NoError(t, err)
	eopt := engine.Options{DefaultRepository: h.repo, LeaseTTL: 20 * time.Second,
		Backoff: engine.Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: 0.1}}
	scfg := scheduler.Config{DataDir: h.data, Tick: 50 * time.Millisecond, MaxConcurrency: 4, CleanupEvery: -1,
		Profiles: []agent.Profile{refProfile("ref", "implementer", "reviewer", "debugger")}}
	for _, o := range opts {
		o(&eopt, &scfg)
	}
	h.eng = engine.New(h.st, eopt)
	wcfg.DataDir = h.data
	h.wt, err = worktree.NewManager(wcfg)
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	h.run, err = runner.New(runner.Config{Self: self, DataDir: h.data})
	require.NoError(t, err)
	h.s, err = scheduler.New(h.eng, h.wt, h.run, scfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, h.s.Stop(context.Background()))
		require.NoError(t, h.run.Close())
		require.NoError(t, h.wt.Close())
		require.NoError(t, h.st.Close())
	})
	return h
}

// until ticks the scheduler until cond holds (one tick before each look), failing at the test
// binary's deadline with the missions' dump: a loaded machine makes the scheduler slow, not
// stuck (a 30-mission voyage took more than 90 s at load 35).
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	testenv.WaitForState(h.t, what, func() bool {
		_, err := h.s.RunOnce(h.ctx)
		require.NoError(h.t, err)
		return cond()
	}, h.dump)
}

// waitFor waits for cond without ticking (the loop started by Start does the work), failing
// at the test binary's deadline with the missions' dump.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	testenv.WaitForState(h.t, what, cond, h.dump)
}

func (h *harness) voyageState(id string) domain.VoyageState {
	d, err := h.eng.VoyageStatus(h.ctx, id)
	require.NoError(h.t, err)
	return d.Voyage.State
}

func (h *harness) mission(id string) domain.Mission {
	d, err := h.eng.GetMission(h.ctx, id)
	require.NoError(h.t, err)
	return d.Mission
}

// file reads path at the tip of the repository's main branch.
func (h *harness) file(path string) (string, bool) {
	out, err := exec.Command("git", "-C", h.repo, "show", "main:"+path).CombinedOutput()
	return string(out), err == nil
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), testenv.GitEnv()...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// makeRepo creates a repository with one commit on main, not checked out anywhere else.
func makeRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# sample\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("line one\n"), 0o644))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// createMissionProcess creates one mission in another process and prints when it returned.
func createMissionProcess(db, repo, area string) int {
	ctx := context.Background()
	st, err := teststore.Open(ctx, db)
	if err != nil {
		return 1
	}
	defer st.Close()
	e := engine.New(st, engine.Options{DefaultRepository: repo})
	if _, err := e.CreateMission(ctx, engine.MissionSpec{Title: "cross", WriteArea: []string{area}}, "bench"); err != nil {
		return 1
	}
	b, _ := time.Now().MarshalText()
	_, _ = os.Stdout.Write(b)
	return 0
}

// dump describes every mission for a failing test.
func (h *harness) dump() string {
	var b strings.Builder
	ms, _ := h.eng.ListMissions(h.ctx, engine.MissionFilter{Limit: 1000})
	for _, m := range ms {
		fmt.Fprintf(&b, "%s %-8s %-10s landing=%-10s attempt=%d kind=%s title=%q", m.ID, m.Key, m.State, m.Landing, m.Attempt, m.Kind, m.Title)
		if m.Decision != nil {
			fmt.Fprintf(&b, " decision=%s (%s)", m.Decision.Kind, m.Decision.Reason)
		}
		if m.LastFailure != nil {
			fmt.Fprintf(&b, " failure=%s: %s %s", m.LastFailure.Kind, m.LastFailure.Summary, firstN(m.LastFailure.Diagnostic, 300))
		}
		if why, err := h.eng.Explain(h.ctx, m.ID); err == nil && len(why) > 0 {
			fmt.Fprintf(&b, " why=%s", why[0].Message)
		}
		b.WriteString("\n")
	}
	if w, err := h.eng.LatestWave(h.ctx); err == nil {
		for _, e := range w.Held {
			fmt.Fprintf(&b, "held %s: %s\n", e.MissionID, e.Reason)
		}
	}
	return b.String()
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
