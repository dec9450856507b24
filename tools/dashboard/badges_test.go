package dashboard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// The header's counts (every mission) and a voyage page's (its missions) are the same
// groups from one function: on the only voyage, with missions completed, failed, blocked,
// running and waiting, they agree, group for group.
func TestBadges_HeaderAndVoyageAgree(t *testing.T) {
	f := start(t, "")
	one := 1
	var specs []engine.MissionSpec
	for _, k := range []string{"done", "broken", "stuck", "busy", "later", "later2"} {
		specs = append(specs, engine.MissionSpec{Key: k, Title: k, RetryBudget: &one})
	}
	d, err := f.eng.Dispatch(f.ctx, engine.VoyageSpec{Title: "mixed", Missions: specs}, "test")
	require.NoError(t, err)
	done := f.run(d.IDs["done"])
	_, err = f.eng.Complete(f.ctx, done.Fence(), domain.WorkerResult{Status: domain.ResultCompleted, Summary: "ok"})
	require.NoError(t, err)
	broken := f.run(d.IDs["broken"])
	_, err = f.eng.Fail(f.ctx, broken.Fence(), engine.FailRequest{Failure: domain.Failure{Kind: domain.FailureTest, Summary: "red"}, Final: true})
	require.NoError(t, err)
	f.block(f.run(d.IDs["stuck"]))
	f.run(d.IDs["busy"])

	var o dashboard.Overview
	f.getJSON("/api/overview", &o)
	var v dashboard.VoyagePage
	f.getJSON("/api/voyages/"+d.Voyage.ID, &v)
	counts := func(bs []dashboard.Badge) map[string]int {
		out := map[string]int{}
		for _, b := range bs {
			out[b.Key] = b.Count
		}
		return out
	}
	want := map[string]int{"completed": 1, "failed": 1, "blocked": 1, "running": 1, "waiting": 2}
	require.Equal(t, want, counts(v.Badges), "the voyage's badges")
	require.Equal(t, v.Badges, o.Badges, "the header counts the same groups the same way")
	total := 0
	for _, n := range o.Status.Counts {
		total += n
	}
	sum := 0
	for _, b := range o.Badges {
		sum += b.Count
	}
	require.Equal(t, total, sum, "every mission is in one group")
}
