package scheduler_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/planner"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
)

// whyLanding returns mission id's landing_target_busy reason, if it has one.
func (h *harness) whyLanding(id string) (engine.Reason, bool) {
	h.t.Helper()
	d, err := h.eng.GetMission(h.ctx, id)
	require.NoError(h.t, err)
	for _, r := range d.WhyNotRunning {
		if r.Code == domain.LandWaitTargetBusy {
			return r, true
		}
	}
	return engine.Reason{}, false
}

// In cluster mode (Config.Node) a completed mission whose target another node holds the
// landing lock of does not land: its why_not_running names that node; when the other node
// releases the lock, it lands, and this node's own lock is gone after.
func TestLandingLock_ClusterNodeWaitsForAnotherNodesLock(t *testing.T) {
	h := newHarness(t, func(_ *engine.Options, c *scheduler.Config) { c.Node = "n1" })
	target := planner.TargetKey(h.repo, "main")
	held, err := h.eng.LandingLockTake(h.ctx, target, "n2", time.Hour)
	require.NoError(t, err)
	require.True(t, held)
	m := h.create(engine.MissionSpec{Title: "locked", TargetBranch: "main", WriteArea: []string{"l.txt"}, Brief: "@write l.txt x\n@commit l\n@done"})
	h.until("its landing to wait for n2's lock", func() bool {
		r, ok := h.whyLanding(m.ID)
		return ok && strings.Contains(r.Message, "node n2 is landing onto main of "+h.repo+": this one is taken when that node")
	})
	require.Equal(t, domain.StateCompleted, h.mission(m.ID).State)
	require.NotEqual(t, domain.LandingLanded, h.mission(m.ID).Landing)
	_, landed := h.file("l.txt")
	require.False(t, landed, "nothing landed onto main")

	require.NoError(t, h.eng.LandingLockRelease(h.ctx, target, "n2"))
	h.until("it lands once n2 released the lock", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	h.until("n1's own lock to be released", func() bool {
		ls, err := h.eng.LandingLocks(h.ctx)
		require.NoError(t, err)
		return len(ls) == 0
	})
}

// A single node (no Config.Node) neither reads nor takes landing locks: a lock row of some
// node changes nothing, and the landing leaves it as it was.
func TestLandingLock_ASingleNodeIgnoresLocks(t *testing.T) {
	h := newHarness(t)
	target := planner.TargetKey(h.repo, "main")
	held, err := h.eng.LandingLockTake(h.ctx, target, "n2", time.Hour)
	require.NoError(t, err)
	require.True(t, held)
	before, err := h.eng.LandingLocks(h.ctx)
	require.NoError(t, err)
	m := h.create(engine.MissionSpec{Title: "single", TargetBranch: "main", WriteArea: []string{"s.txt"}, Brief: "@write s.txt x\n@commit s\n@done"})
	h.until("it lands", func() bool { return h.mission(m.ID).Landing == domain.LandingLanded })
	after, err := h.eng.LandingLocks(h.ctx)
	require.NoError(t, err)
	require.Equal(t, before, after)
}
