package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// toolNames matches the MCP tools that have a command (a person's output names the command).
func toolNames(t *testing.T) *regexp.Regexp {
	t.Helper()
	var names []string
	for tool, c := range toolCommands {
		if c != "" {
			names = append(names, regexp.QuoteMeta(tool))
		}
	}
	require.NotEmpty(t, names)
	return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
}

// escalations show prints one escalation whole: its fields, its reason and decision in the
// command line's words, and the commands that decide it; a bad or unknown id is told as the
// argument; the group's help lists show.
func TestCLI_EscalationsShow(t *testing.T) {
	s := newSandbox(t)
	up := cliJSON[domain.Mission](s, "go", "upstream")
	dep := cliJSON[domain.Mission](s, "go", "dependent", "--depends-on", up.ID)
	cliJSON[domain.Mission](s, "missions", "cancel", up.ID, "--reason", "not needed")
	es := cliJSON[[]domain.Escalation](s, "escalations", "list", "--mission", dep.ID)
	require.Len(t, es, 1)
	e := es[0]

	out, errs, code := s.cli("escalations", "show", e.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, e.ID+"  open (kind "+e.Kind)
	require.Contains(t, out, "missions    "+dep.ID)
	require.Contains(t, out, "caused by   "+up.ID)
	require.Contains(t, out, "decide      ")
	require.Contains(t, out, "mcp-scheduler missions retry "+up.ID, "the safe next step, as a command")
	for _, action := range []string{"retry", "skip", "cancel", "acknowledge"} {
		require.Contains(t, out, "mcp-scheduler escalations resolve "+e.ID+" --action "+action)
	}
	require.Contains(t, out, "mcp-scheduler missions show "+dep.ID)
	require.Empty(t, toolNames(t).FindAllString(out, -1), "no tool names in a person's output:\n%s", out)
	require.Equal(t, e, cliJSON[domain.Escalation](s, "escalations", "show", e.ID))

	out, _, _ = s.cli("missions", "show", dep.ID)
	require.Contains(t, out, "(mcp-scheduler escalations show "+e.ID+")")

	_, errs, code = s.cli("escalations", "show", "nope")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, "ESCALATION_ID")
	require.NotContains(t, errs, "escalation_id")
	require.NotContains(t, errs, "list_escalations")
	_, errs, code = s.cli("escalations", "show", domain.PrefixEscalation+"_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "01JD5Z8Q6X3V4W5Y6Z7A8B9C0D")

	cliJSON[domain.Escalation](s, "escalations", "resolve", e.ID, "--action", "acknowledge", "--note", "seen")
	out, _, code = s.cli("escalations", "show", e.ID)
	require.Equal(t, 0, code)
	require.Contains(t, out, "resolved    ")
	require.NotContains(t, out, "--action", "a resolved escalation offers no resolution")

	out, _, code = s.cli("escalations", "--help")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^\s+show\s`, out)
}

// A mission held by its spent cost budget says so in missions show (and watch) with the
// command that raises the limit (its flag, its id), not the MCP tool and field that do it. (A failed
// attempt that spends past the limit blocks the mission instead: the limit is lowered to
// what the first attempt spent, from the command line, to hold it.)
func TestCLI_BudgetHoldNamesTheCommand(t *testing.T) {
	s := newSandbox(t)
	m := cliJSON[domain.Mission](s, "go", "spends its budget", "--cost-limit-usd", "0.10")
	ctx := context.Background()
	eng := engine.New(teststore.OpenAt(t, filepath.Join(s.dataDir, "mcp-scheduler.db")), engine.Options{DefaultRepository: s.repo})
	p, err := eng.BeginClaim(ctx, engine.ClaimRequest{AgentID: "test-agent"})
	require.NoError(t, err)
	c, err := p.HandOver(ctx, engine.Workspace{}, nil)
	require.NoError(t, err)
	require.Equal(t, m.ID, c.Mission.ID)
	_, err = eng.Fail(ctx, c.Mission.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "tests failed"},
		Usage: &domain.Usage{InputTokens: 1000, OutputTokens: 100, CostUSD: 0.05}})
	require.NoError(t, err)
	_, errs, code := s.cli("missions", "update", m.ID, "--cost-limit-usd", "0.05")
	require.Equal(t, 0, code, errs)

	testenv.WaitFor(t, "the mission to wait for its budget (after its retry backoff)", func() bool {
		for _, r := range cliJSON[engine.MissionDetail](s, "missions", "show", m.ID).WhyNotRunning {
			if r.Code == engine.WhyBudget {
				return true
			}
		}
		return false
	})
	var out string
	out, errs, code = s.cli("missions", "show", m.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "mcp-scheduler missions update "+m.ID+" --cost-limit-usd")
	require.NotContains(t, out, "update_mission")
	require.NotContains(t, out, "cost_limit_usd")

	out, errs, code = s.cli("watch", "--once") // piped: the plain view, the same words
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "mcp-scheduler missions update "+m.ID+" --cost-limit-usd", out)
	require.NotContains(t, out, "update_mission")
	out, errs, code = s.cli("watch", "--once", "--json")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "update_mission cost_limit_usd", "--json carries the engine's own sentence")
}
