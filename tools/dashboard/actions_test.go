package dashboard_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestActions_ApproveLandingAndSkip: approve-landing moves a landing that waits for approval
// to approved, and is refused with the engine's text when nothing waits; skip gives a pending
// mission up (cancelled, skipped) with the note as its reason; the agents page lists the
// completed mission in the landing queue with why it waits, and the usage its agent reported.
func TestActions_ApproveLandingAndSkip(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	a := f.run(d.IDs["a"])
	_, err := f.eng.Complete(f.ctx, a.Fence(), domain.WorkerResult{Status: domain.ResultCompleted, Summary: "outline written",
		Usage: &domain.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.25}})
	require.NoError(t, err)
	_, err = f.eng.AwaitApproval(f.ctx, a.ID, "the repository's landing policy is approval")
	require.NoError(t, err)

	var p struct {
		Landing []struct {
			Mission domain.Mission
			Why     []struct{ Code, Message string }
		}
		CostUSD float64 `json:"cost_usd"`
	}
	f.getJSON("/api/agents", &p)
	require.Len(t, p.Landing, 1)
	require.Equal(t, a.ID, p.Landing[0].Mission.ID)
	require.Equal(t, domain.LandingApproval, p.Landing[0].Mission.Landing)
	require.NotEmpty(t, p.Landing[0].Why, "the landing queue says why it waits")
	require.InDelta(t, 0.25, p.CostUSD, 1e-9)

	post := func(path, body string) (int, string) {
		code, b, _ := f.do(http.MethodPost, path, body, map[string]string{"Origin": f.base, "Content-Type": "application/json"})
		return code, b
	}
	code, body := post("/api/missions/"+a.ID+"/approve-landing", `{"note":"looks right"}`)
	require.Equal(t, http.StatusOK, code, body)
	m, err := f.eng.Mission(f.ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, domain.LandingApproved, m.Landing)
	code, body = post("/api/missions/"+d.IDs["c"]+"/approve-landing", `{}`)
	require.Contains(t, []int{http.StatusBadRequest, http.StatusConflict}, code, body)
	require.Contains(t, body, `"error"`)

	code, body = post("/api/missions/"+d.IDs["c"]+"/skip", `{"note":"not needed this time"}`)
	require.Equal(t, http.StatusOK, code, body)
	m, err = f.eng.Mission(f.ctx, d.IDs["c"])
	require.NoError(t, err)
	require.Equal(t, domain.StateCancelled, m.State)
	code, body = post("/api/missions/"+d.IDs["c"]+"/retry", ``)
	require.Equal(t, http.StatusOK, code, "an empty body is an empty object: %s", body)
	m, err = f.eng.Mission(f.ctx, d.IDs["c"])
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, m.State)
}
