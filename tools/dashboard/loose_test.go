package dashboard_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
	"github.com/mcp-scheduler/mcp-scheduler/tools/dashboard"
)

// TestLooseMissions: a mission queued on its own (`mcp-scheduler go`, no voyage) is listed
// by /api/missions, which the voyages page shows, with why it waits; a voyage's missions and
// finished missions are not; and the list needs the token like every API path.
func TestLooseMissions(t *testing.T) {
	f := start(t, "tok")
	d := f.voyage()
	first, err := f.eng.CreateMission(f.ctx, engine.MissionSpec{Title: "add a health endpoint"}, "test")
	require.NoError(t, err)
	second, err := f.eng.CreateMission(f.ctx, engine.MissionSpec{Title: "document it", DependsOn: []string{first.Mission.ID}}, "test")
	require.NoError(t, err)
	done, err := f.eng.CreateMission(f.ctx, engine.MissionSpec{Title: "dropped"}, "test")
	require.NoError(t, err)
	_, err = f.eng.Cancel(f.ctx, done.Mission.ID, "not needed", false, "test")
	require.NoError(t, err)

	var p dashboard.LoosePage
	f.getJSON("/api/missions", &p)
	require.False(t, p.More)
	var ids []string
	for _, m := range p.Missions {
		ids = append(ids, m.ID)
	}
	require.Equal(t, []string{first.Mission.ID, second.Mission.ID}, ids, "the missions outside a voyage, oldest first; not the voyage's %v nor the cancelled one", d.IDs)
	require.Equal(t, domain.StatePending, p.Missions[1].State)
	var codes []string
	for _, w := range p.Missions[1].Why {
		codes = append(codes, w.Code)
	}
	require.Contains(t, codes, engine.WhyHardDep, "why it waits, as a voyage page says it: %+v", p.Missions[1].Why)

	code, body, _ := f.do(http.MethodGet, "/api/missions", "", nil)
	require.Equal(t, http.StatusUnauthorized, code, body)
}

// TestOverview_NoLeader: while no scheduler loop leads the data dir, the header's data says
// so in the words `status` and `watch` use.
func TestOverview_NoLeader(t *testing.T) {
	f := start(t, "")
	var o dashboard.Overview
	f.getJSON("/api/overview", &o)
	require.Equal(t, "idle", o.Status.Loop)
	require.Equal(t, tools.LoopIdleText, o.LoopIdle)
}

// TestBrowser_LooseMissions: in a real Chromium, the voyages page lists the missions queued
// outside a voyage with their state and why they wait (not the voyage's missions), a state
// change reaches the row without a reload, and a click opens the mission. Screenshot
// loose-missions.png.
func TestBrowser_LooseMissions(t *testing.T) {
	f := start(t, "")
	d := f.voyage()
	first, err := f.eng.CreateMission(f.ctx, engine.MissionSpec{Title: "add a health endpoint"}, "test")
	require.NoError(t, err)
	second, err := f.eng.CreateMission(f.ctx, engine.MissionSpec{Title: "document it", DependsOn: []string{first.Mission.ID}}, "test")
	require.NoError(t, err)
	b := startBrowser(t, f, "loose.mjs", "FIRST="+first.Mission.ID, "SECOND="+second.Mission.ID, "INVOYAGE="+d.IDs["a"])
	for s := b.step(); s != ""; s = b.step() {
		if s == "listed" {
			f.run(first.Mission.ID)
			b.next()
		}
	}
	b.finish(1)
}
