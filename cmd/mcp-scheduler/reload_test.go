package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// reloadConfig is the configuration of the reload test: one reference-agent profile whose
// day is capped at dailyCap dollars (TOML text, so a test can write an invalid one).
func reloadConfig(dailyCap string) string {
	return `[scheduler]
tick = "100ms"
[[profiles]]
name = "ref"
runtime = "ndjson"
command = ["{mcp_scheduler}", "reference-agent"]
env = ["PATH", "HOME"]
daily_cost_limit_usd = ` + dailyCap + "\n"
}

// A daemon puts a raised daily cap in force at SIGHUP, without a restart: a mission held by
// its profile's spent day starts. An invalid edit is refused with a log line and changes
// nothing.
func TestDaemon_SIGHUPReloadsTheDailyCaps(t *testing.T) {
	s := newSandbox(t)
	d := startReloadDaemon(t, s, reloadConfig("0.10"))
	cfg := filepath.Join(s.home, "config", "mcp-scheduler", "config.toml")
	ctx := context.Background()
	eng := engine.New(teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db")), engine.Options{DefaultRepository: s.repo})
	spender, err := eng.CreateMission(ctx, engine.MissionSpec{Title: "spends the day",
		Brief: `@result {"status":"completed","summary":"spent","usage":{"input_tokens":1000,"output_tokens":100,"cost_usd":0.5}}`}, "test")
	require.NoError(t, err)
	testenv.WaitFor(t, "the spender to complete", func() bool {
		m, err := eng.Mission(ctx, spender.Mission.ID)
		require.NoError(t, err)
		return m.State == domain.StateCompleted
	})
	held, err := eng.CreateMission(ctx, engine.MissionSpec{Title: "waits for the cap", Brief: "@done ok"}, "test")
	require.NoError(t, err)
	heldByBudget := func() bool {
		// as a person sees it: the CLI reads the caps from the same file
		why := cliJSON[engine.MissionDetail](s, "missions", "show", held.Mission.ID).WhyNotRunning
		for _, r := range why {
			if r.Code == engine.WhyBudget {
				return true
			}
		}
		return false
	}
	testenv.WaitFor(t, "the second mission to wait for the profile's day", heldByBudget)

	require.NoError(t, os.WriteFile(cfg, []byte(reloadConfig("-1")), 0o600))
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGHUP))
	testenv.WaitFor(t, "the invalid reload to be refused", func() bool {
		return strings.Contains(d.stderrText(), "configuration reload refused")
	})
	require.Contains(t, d.stderrText(), "daily_cost_limit_usd: -1 must not be negative")
	m, err := eng.Mission(ctx, held.Mission.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, m.State, "a refused reload keeps the cap in force")

	require.NoError(t, os.WriteFile(cfg, []byte(reloadConfig("10")), 0o600))
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGHUP))
	testenv.WaitFor(t, "the held mission to complete after the cap is raised", func() bool {
		m, err := eng.Mission(ctx, held.Mission.ID)
		require.NoError(t, err)
		return m.State == domain.StateCompleted
	})
	require.Contains(t, d.stderrText(), "configuration reloaded")
}

// startReloadDaemon writes config as the sandbox's configuration file and starts a daemon
// that leads its data dir (stopped at the test's end).
func startReloadDaemon(t *testing.T, s *sandbox, config string) *proc {
	t.Helper()
	cfg := filepath.Join(s.home, "config", "mcp-scheduler", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	require.NoError(t, os.WriteFile(cfg, []byte(config), 0o600))
	d := s.start(nil, "daemon")
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			_ = d.cmd.Process.Signal(os.Interrupt)
			d.wait()
		}
	})
	testenv.WaitFor(t, "the daemon to lead", func() bool {
		st := cliJSON[struct {
			Loop string `json:"loop"`
		}](s, "status")
		return strings.HasPrefix(st.Loop, "leading")
	})
	return d
}
