package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// A claim that finds nothing says why (found by a fresh-user trial: it said "none pending"
// while missions waited for another persona): what the waiting missions ask for that the
// claimer does not offer, and what the others wait for.
func TestPull_NoWorkSaysWhy(t *testing.T) {
	h := newHarness(t, withConfig(func(c *scheduler.Config) { c.Profiles = nil }))
	_, err := h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: "worker-1"})
	require.ErrorIs(t, err, domain.ErrNoWork)
	require.ErrorContains(t, err, "no mission is pending or interrupted")

	h.create(engine.MissionSpec{Title: "design", Persona: "architect", WriteArea: []string{"a/**"}})
	h.create(engine.MissionSpec{Title: "train", Capabilities: []string{"gpu"}, WriteArea: []string{"g/**"}})
	up := h.create(engine.MissionSpec{Title: "first", Persona: "architect", WriteArea: []string{"u/**"}})
	h.create(engine.MissionSpec{Title: "then", WriteArea: []string{"d/**"}, DependsOn: []string{up.ID}})

	_, err = h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: "worker-1", Personas: []string{"worker"}})
	var nw *scheduler.NoWorkError
	require.ErrorAs(t, err, &nw)
	require.ErrorIs(t, err, domain.ErrNoWork)
	msg := err.Error()
	require.Contains(t, msg, "of 4 waiting missions")
	require.Contains(t, msg, "3 ask for what you do not offer (persona architect ×2, capability gpu ×1)")
	require.Contains(t, msg, "1 wait ("+engine.WhyHardDep+" ×1")
	require.Contains(t, msg, "pass wait_seconds")

	_, err = h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: "architect-1", Personas: []string{"architect"},
		Capabilities: []string{"gpu"}, Repository: "/elsewhere"})
	require.ErrorContains(t, err, "4 are in another repository than /elsewhere")
}
