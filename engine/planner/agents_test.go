package planner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// A mission no profile can take waits for an agent to claim it for the grace period from when
// it began to wait, then is held as no_agent and escalated once (a voyage's mission is
// reported by its voyage instead). Never a deadlock.
func TestCompute_NoAgent(t *testing.T) {
	t.Parallel()
	m := mission(1, persona("tester"))
	only := []planner.Profile{{Name: "dev", Personas: []string{"developer"}, Confidence: 1, MaxConcurrency: 1}}

	p := planner.Compute(snap([]domain.Mission{m}), t0, lim, only)
	r := hold(t, p, "m01")
	require.Equal(t, engine.WhyWaitingAgent, r.Code)
	require.Equal(t, t0, r.Since)
	require.Contains(t, r.Message, "no agent profile offers persona tester")
	require.Contains(t, r.Message, t0.Add(lim.UnclaimedGrace).Format(time.RFC3339))
	require.Empty(t, p.Escalate)
	require.Equal(t, 1, p.Runnable)

	// Within the grace period, the wait keeps its start; an external agent that can take it is named.
	s := snap([]domain.Mission{m})
	s.Holds = map[string]engine.Hold{"m01": {MissionID: "m01", Reason: r}}
	s.Agents = []domain.Agent{{ID: "old", Kind: "external", Personas: []string{"tester"}, LastSeen: t0.Add(-time.Hour)},
		{ID: "codex-1", Kind: "external", Personas: []string{"tester"}, LastSeen: t0.Add(4 * time.Minute)}}
	p = planner.Compute(s, t0.Add(4*time.Minute), lim, only)
	r2 := hold(t, p, "m01")
	require.Equal(t, engine.WhyWaitingAgent, r2.Code)
	require.Equal(t, t0, r2.Since)
	require.Contains(t, r2.Message, "external agent codex-1 can take it")
	require.NotContains(t, r2.Message, "old", "an agent not seen within the TTL does not count")

	// The grace period over: no_agent, escalated once.
	s.Agents = nil
	p = planner.Compute(s, t0.Add(lim.UnclaimedGrace), lim, only)
	r3 := hold(t, p, "m01")
	require.Equal(t, engine.WhyUnavailable, r3.Code)
	require.Contains(t, r3.Message, "none claimed it within 5m0s (unclaimed_grace)")
	require.Len(t, p.Escalate, 1)
	e := p.Escalate[0]
	require.Equal(t, []string{"m01"}, e.MissionIDs)
	require.Equal(t, engine.KindNoAgent, e.Kind)
	require.Equal(t, domain.RouteMainAgent, e.Route)
	require.Contains(t, e.Reason, r3.Message)
	require.NotEmpty(t, e.DecisionRequired)
	require.NotEmpty(t, e.SafeNextStep)

	// Held as no_agent already: the same reason, no second escalation.
	s.Holds = map[string]engine.Hold{"m01": {MissionID: "m01", Reason: r3}}
	p = planner.Compute(s, t0.Add(time.Hour), lim, only)
	require.Equal(t, r3, hold(t, p, "m01"))
	require.Empty(t, p.Escalate)

	// A voyage's mission: held the same, reported by the voyage's settlement.
	s = snap([]domain.Mission{with(m, voyage("v1"))})
	s.Voyages = map[string]domain.Voyage{"v1": {ID: "v1", State: domain.VoyageActive}}
	s.Holds = map[string]engine.Hold{"m01": {MissionID: "m01", Reason: r}}
	p = planner.Compute(s, t0.Add(time.Hour), lim, only)
	require.Equal(t, engine.WhyUnavailable, hold(t, p, "m01").Code)
	require.Empty(t, p.Escalate)

	// No profile at all.
	p = planner.Compute(snap([]domain.Mission{mission(2)}), t0, lim, nil)
	require.Contains(t, hold(t, p, "m02").Message, "no agent profile is configured")
}

// A voyage's cost limit, its changed requirements (before the mission started) and the
// mission's own cost limit hold it back, each needing a decision (engine.VoyageHold).
func TestCompute_VoyageAndCostHolds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		m    domain.Mission
		v    domain.Voyage
		tl   int64 // the mission's token limit (Snapshot.TokenLimits)
		want string
		msg  string // the hold's sentence, when it is a budget's
	}{
		{name: "voyage cost limit reached", m: mission(1, voyage("v")),
			v: domain.Voyage{ID: "v", CostLimitUSD: 1, Usage: domain.Usage{CostUSD: 1}}, want: engine.WhyBudget,
			msg: "voyage v's cost budget is spent ($1.0000 of $1.0000): nothing more starts until it is raised (update_voyage cost_limit_usd)"},
		{name: "voyage requirements changed", m: mission(1, voyage("v")), v: domain.Voyage{ID: "v", RequirementsChanged: true}, want: engine.WhyRequirements},
		{name: "requirements changed after it started", m: mission(1, voyage("v"), func(m *domain.Mission) { m.Attempt = 1 }),
			v: domain.Voyage{ID: "v", RequirementsChanged: true}},
		{name: "mission cost limit reached", m: mission(1, func(m *domain.Mission) { m.CostLimitUSD, m.Usage.CostUSD = 2, 3 }), want: engine.WhyBudget,
			msg: "mission m01's cost budget is spent ($3.0000 of $2.0000): nothing more starts until it is raised (update_mission cost_limit_usd)"},
		{name: "mission token limit reached", m: mission(1, func(m *domain.Mission) { m.Usage.InputTokens, m.Usage.OutputTokens = 200, 60 }),
			tl: 250, want: engine.WhyBudget,
			msg: "mission m01's tokens budget is spent (260 tokens of 250 tokens): nothing more starts until it is raised (update_mission token_limit)"},
		{name: "under the token limit", m: mission(1, func(m *domain.Mission) { m.Usage.InputTokens = 249 }), tl: 250},
		{name: "under the limits", m: mission(1, voyage("v")), v: domain.Voyage{ID: "v", CostLimitUSD: 1, Usage: domain.Usage{CostUSD: 0.5}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := snap([]domain.Mission{c.m})
			s.Voyages = map[string]domain.Voyage{"v": c.v}
			s.TokenLimits = map[string]int64{"m01": c.tl}
			p := planner.Compute(s, t0, lim, []planner.Profile{gen})
			if c.want == "" {
				require.Equal(t, []string{"m01→gen"}, dispatched(p))
				return
			}
			r := hold(t, p, "m01")
			require.Equal(t, c.want, r.Code)
			if c.msg != "" {
				require.Equal(t, c.msg, r.Message, "the one sentence of a spent budget (engine.Breach.HoldMessage)")
			}
			require.False(t, r.Transient(), "it needs a decision")
		})
	}
}

// The voyage settlement's agent rule comes from the same plan: a mission a profile can take
// passes; one the plan held for want of an agent gets the plan's hold (so the grace period
// cannot end for the settlement before it ends for the planner); any other one gets what the
// planner would say.
func TestAgentCheck(t *testing.T) {
	t.Parallel()
	only := []planner.Profile{{Name: "dev", Personas: []string{"developer"}, Confidence: 1, MaxConcurrency: 1}}
	m := mission(1, persona("tester"))
	s := snap([]domain.Mission{m})
	p := planner.Compute(s, t0, lim, only)
	later := t0.Add(time.Hour) // past the grace period
	check := planner.AgentCheck(s, p, later, lim, only)
	require.Nil(t, check(ptr(mission(2, persona("developer")))))
	require.Equal(t, hold(t, p, "m01"), *check(&m), "the plan's own hold")
	r := check(ptr(mission(3, persona("tester"))))
	require.Equal(t, engine.WhyWaitingAgent, r.Code, "not held by the plan: it begins to wait now")
	require.Equal(t, later, r.Since)
}

func ptr[T any](v T) *T { return &v }
