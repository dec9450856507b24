package planner_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
)

// The planner's tests build snapshots by hand: no database, no process, no clock.

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

var lim = planner.Limits{MaxConcurrency: 8, PerRepository: 8, UrgentPriority: 10,
	UnclaimedGrace: 5 * time.Minute, ExternalAgentTTL: time.Minute}

// gen is the default managed profile: any persona, no capabilities, two slots.
var gen = planner.Profile{Name: "gen", Confidence: 0.8, MaxConcurrency: 2}

// mission is a pending mission of /repo with its own write area, created i seconds after t0.
func mission(i int, opts ...func(*domain.Mission)) domain.Mission {
	m := domain.Mission{ID: fmt.Sprintf("m%02d", i), Title: fmt.Sprintf("mission %d", i), State: domain.StatePending,
		Kind: domain.KindWork, Priority: 100, Repository: "/repo", WriteArea: []string{fmt.Sprintf("f%d/**", i)},
		CreatedAt: t0.Add(time.Duration(i) * time.Second), Landing: domain.LandingNone}
	for _, o := range opts {
		o(&m)
	}
	return m
}

func prio(p int) func(*domain.Mission) { return func(m *domain.Mission) { m.Priority = p } }
func voyage(v string) func(*domain.Mission) {
	return func(m *domain.Mission) { m.VoyageID, m.VoyageActive = v, true }
}
func persona(p string) func(*domain.Mission) { return func(m *domain.Mission) { m.Persona = p } }
func caps(c ...string) func(*domain.Mission) { return func(m *domain.Mission) { m.Capabilities = c } }
func repo(r string) func(*domain.Mission)    { return func(m *domain.Mission) { m.Repository = r } }
func exclusive(m *domain.Mission)            { m.WriteArea = nil }
func running(p string) func(*domain.Mission) {
	return func(m *domain.Mission) { m.State, m.Profile = domain.StateRunning, p }
}

// snap is a snapshot of candidates (any order) and running missions.
func snap(cands []domain.Mission, run ...domain.Mission) planner.Snapshot {
	return planner.Snapshot{Missions: cands, Running: run, Edges: map[string]engine.Edges{}}
}

func dispatched(p planner.Plan) []string {
	out := []string{}
	for _, d := range p.Dispatch {
		out = append(out, d.Mission.ID+"→"+d.Profile)
	}
	return out
}

func heldCodes(p planner.Plan) map[string]string {
	out := map[string]string{}
	for _, h := range p.Held {
		out[h.MissionID] = h.Reason.Code
	}
	return out
}

func hold(t *testing.T, p planner.Plan, id string) engine.Reason {
	t.Helper()
	for _, h := range p.Held {
		if h.MissionID == id {
			return h.Reason
		}
	}
	require.Failf(t, "not held", "%s is not held; plan: dispatch %v, held %v", id, dispatched(p), heldCodes(p))
	return engine.Reason{}
}
