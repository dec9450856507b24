package runner

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/adapters"
	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
)

// TestMain lets the test binary play our own binary's hidden subcommands, so the tests run
// the real shim and the real reference agent as child processes without a prebuilt binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case ShimSubcommand:
			os.Exit(ShimMain(os.Args[2:]))
		case refagent.Subcommand:
			os.Exit(refagent.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		case crashAfterRequestCmd:
			os.Exit(crashAfterRequestMain(os.Args[2:]))
		}
	}
	// Race-enabled shims (started with the server's Go runtime variables) otherwise sleep
	// 1 s at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}

// brokenEnd wraps the ndjson adapter with a decoder whose final result breaks the protocol,
// to check that the runner never hands such a result on.
type brokenEnd struct{ adapters.NDJSON }

func (b brokenEnd) NewDecoder() agent.Decoder { return brokenDecoder{b.NDJSON.NewDecoder()} }

type brokenDecoder struct{ agent.Decoder }

func (brokenDecoder) End(agent.ExitStatus) agent.WorkerResult {
	return agent.WorkerResult{Status: "finished", Summary: "all good"}
}

func self(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// newRunner returns a Runner over a temporary data dir; its log is shown when the test fails.
func newRunner(t testing.TB, dataDir string, opts ...func(*Config)) *Runner {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	logs := &testenv.SyncBuffer{}
	cfg := Config{Self: self(t), DataDir: dataDir, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, o := range opts {
		o(&cfg)
	}
	r, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, r.Close())
		if t.Failed() {
			t.Logf("runner log:\n%s", logs.String())
		}
	})
	return r
}

// gitRepo makes a repository with one commit; .mcp-scheduler/ is excluded as the worktree
// package does for real workspaces.
func gitRepo(t testing.TB, dir string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	git(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("repo\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(".mcp-scheduler/\n"), 0o644))
	git(t, dir, "add", "README.md")
	git(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// refProfile runs the reference agent over our protocol.
func refProfile() agent.Profile {
	return agent.Profile{
		Name:    "ref",
		Runtime: agent.RuntimeNDJSON,
		Command: []string{"{mcp_scheduler}", refagent.Subcommand},
		Env:     []string{"PATH"},
		// Race-enabled children otherwise sleep 1 s at exit.
		SetEnv: map[string]string{"GORACE": "atexit_sleep_ms=0"},
		// Stop returns as soon as the group is gone, so a long grace costs a well-behaved agent
		// nothing; a short one made a race-enabled agent on a loaded machine look stubborn (it
		// was SIGKILLed while still writing its cancelled result). Tests of the SIGKILL path set
		// their own grace.
		Grace: agent.Duration(20 * time.Second),
	}
}

// refSpec is a spec for mission id running the brief in workspace ws.
func refSpec(t testing.TB, r *Runner, id, ws, brief string) Spec {
	t.Helper()
	dir, err := r.AttemptDir(id, 1)
	require.NoError(t, err)
	return Spec{
		Adapter:    adapters.NDJSON{},
		Profile:    refProfile(),
		AttemptDir: dir,
		Request: agent.LaunchRequest{
			Start:     agent.Start{MissionID: id, Attempt: 1, Epoch: 1, Title: "test " + id, Brief: brief, Workspace: ws},
			BriefFile: filepath.Join(ws, ".mcp-scheduler", "brief.md"),
		},
	}
}

func launch(t testing.TB, r *Runner, s Spec) *Process {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testenv.WaitDeadline(t))
	defer cancel()
	p, err := r.Launch(ctx, s)
	require.NoError(t, err)
	return p
}

// collect reads every event and returns them with the outcome.
func collect(t testing.TB, p *Process) ([]Event, Outcome) {
	t.Helper()
	var evs []Event
	ended := false
	defer func() {
		if !ended { // the wait failed: the agent is not left running
			_ = p.Stop("test timeout")
		}
	}()
	for {
		ev, ok := testenv.ReceiveState(t, "the attempt to end", p.Events(),
			func() string { return fmt.Sprintf("events so far: %v", summarize(evs)) })
		if !ok {
			ended = true
			return evs, p.Wait()
		}
		evs = append(evs, ev)
	}
}

// waitEvent reads events until one matches, returning those read.
func waitEvent(t testing.TB, p *Process, match func(Event) bool) []Event {
	t.Helper()
	var evs []Event
	for {
		ev, ok := testenv.ReceiveState(t, "the awaited event", p.Events(),
			func() string { return fmt.Sprintf("events so far: %v", summarize(evs)) })
		require.True(t, ok, "events ended before the awaited one: %v", summarize(evs))
		evs = append(evs, ev)
		if match(ev) {
			return evs
		}
	}
}

func summarize(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		s := string(ev.Kind) + ":" + ev.Message.Type
		if ev.Message.Message != "" {
			s += " " + clip(ev.Message.Message, 80)
		}
		if ev.Err != nil {
			s += " err=" + clip(ev.Err.Error(), 80)
		}
		out = append(out, s)
	}
	return out
}

func messages(evs []Event, typ string) []agent.Message {
	var out []agent.Message
	for _, ev := range evs {
		if ev.Kind == EventMessage && ev.Message.Type == typ {
			out = append(out, ev.Message)
		}
	}
	return out
}

func logsContaining(evs []Event, s string) []string {
	var out []string
	for _, m := range messages(evs, agent.TypeLog) {
		if strings.Contains(m.Message, s) {
			out = append(out, m.Message)
		}
	}
	return out
}

// grandchildPIDs reads the pids the reference agent announced.
func grandchildPIDs(t testing.TB, evs []Event) []int {
	t.Helper()
	var pids []int
	for _, m := range logsContaining(evs, "grandchild pid=") {
		pid, err := strconv.Atoi(strings.TrimPrefix(m, "grandchild pid="))
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	return pids
}

// requireGone asserts that the processes and the agent's group no longer exist.
func requireGone(t testing.TB, pgid int, pids ...int) {
	t.Helper()
	require.True(t, groupGone(pgid), "process group %d still exists", pgid)
	for _, pid := range pids {
		_, _, err := procStart(pid)
		require.Error(t, err, "process %d still exists", pid)
	}
}

// requireNoZombieChildren asserts that no child of the test process is a zombie (Linux).
func requireNoZombieChildren(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	me := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) > 2 && fields[1] == me {
			require.NotEqual(t, "Z", fields[0], "zombie child: %s", b)
		}
	}
}
