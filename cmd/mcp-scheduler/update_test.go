package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// missions update changes only the fields whose flags are given, through update_mission's
// engine operation; a bad value is a usage mistake (exit 2) named by its flag, and changes
// nothing.
func TestCLI_MissionsUpdateSetsTheGivenFields(t *testing.T) {
	s := newSandbox(t)
	out, errs, code := s.cli("go", "tidy the docs", "--priority", "40", "--json")
	require.Equal(t, 0, code, errs)
	var m domain.Mission
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	id := m.ID

	_, errs, code = s.cli("missions", "update", id, "--cost-limit-usd", "2.5", "--token-limit", "500000")
	require.Equal(t, 0, code, errs)
	d := cliJSON[engine.MissionDetail](s, "missions", "show", id)
	require.Equal(t, 2.5, d.Mission.CostLimitUSD)
	require.Equal(t, int64(500000), d.TokenLimit)
	require.Equal(t, 40, d.Mission.Priority, "a flag not given changes nothing")

	_, errs, code = s.cli("missions", "update", id, "--priority", "0")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "--priority")
	require.NotContains(t, errs, "update_mission")
	_, errs, code = s.cli("missions", "update", id, "--deadline", "tomorrow")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "RFC 3339")
	require.Equal(t, 40, cliJSON[engine.MissionDetail](s, "missions", "show", id).Mission.Priority)
}

// A person raises a spent voyage budget from the command line (voyages update), and its held
// mission starts: the same operation as update_voyage.
func TestCLI_VoyagesUpdateRaisesASpentBudget(t *testing.T) {
	s := newSandbox(t)
	startReloadDaemon(t, s, reloadConfig("0"))
	ctx := context.Background()
	eng := engine.New(teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db")), engine.Options{DefaultRepository: s.repo})
	v, err := eng.Dispatch(ctx, engine.VoyageSpec{Title: "budgeted", CostLimitUSD: 0.10, Missions: []engine.MissionSpec{
		{Key: "spend", Title: "spends the budget",
			Brief: `@result {"status":"completed","summary":"spent","usage":{"input_tokens":1000,"output_tokens":100,"cost_usd":0.5}}`},
		{Key: "next", Title: "waits for the budget", DependsOn: []string{"spend"}, Brief: "@done ok"},
	}}, "test")
	require.NoError(t, err)
	next := v.IDs["next"]
	testenv.WaitFor(t, "the second mission to wait for the voyage's budget", func() bool {
		for _, r := range cliJSON[engine.MissionDetail](s, "missions", "show", next).WhyNotRunning {
			if r.Code == engine.WhyBudget {
				return true
			}
		}
		return false
	})
	_, errs, code := s.cli("voyages", "update", v.Voyage.ID, "--cost-limit-usd", "-1")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "--cost-limit-usd")
	_, errs, code = s.cli("voyages", "update", v.Voyage.ID, "--cost-limit-usd", "10")
	require.Equal(t, 0, code, errs)
	testenv.WaitFor(t, "the held mission to complete after the budget is raised", func() bool {
		m, err := eng.Mission(ctx, next)
		require.NoError(t, err)
		return m.State == domain.StateCompleted
	})
}
