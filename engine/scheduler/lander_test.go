package scheduler_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/engine/scheduler"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// The landing service on its own (no loop): a completed pull-mode mission whose target's
// checkout has local changes in the same file waits, with one checkout escalation to the
// person — one, even when another leader (a second process: its own store, engine and
// landing service on the same database) retries the landing while it still waits. Once the
// checkout is clean the next pass lands the work and closes the escalation.
func TestLander_RunOnceWaitsForTheCheckoutAndEscalatesOnceAcrossLeaders(t *testing.T) {
	h := newHarness(t)
	m := h.create(engine.MissionSpec{Title: "edit shared", WriteArea: []string{"shared.txt"}})
	c, err := h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: "worker"})
	require.NoError(t, err)
	require.Equal(t, m.ID, c.Mission.ID)
	require.NoError(t, os.WriteFile(filepath.Join(c.Workspace.Path, "shared.txt"), []byte("line one, edited\n"), 0o644))
	git(t, c.Workspace.Path, "commit", "-q", "-am", "edit shared")
	_, err = h.eng.Complete(h.ctx, c.Mission.Fence(), domain.WorkerResult{Summary: "edited"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(h.repo, "shared.txt"), []byte("a local change\n"), 0o644))

	now := time.Now()
	cfg := scheduler.Config{DataDir: h.data, Now: func() time.Time { return now }}
	first := scheduler.NewLander(h.eng, h.wt, cfg)
	require.NoError(t, first.RunOnce(h.ctx))
	require.Equal(t, domain.LandingWaiting, h.mission(m.ID).Landing)
	checkouts := func() []domain.Escalation {
		escs, err := h.eng.Escalations(h.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: m.ID})
		require.NoError(t, err)
		return escs
	}
	require.Len(t, checkouts(), 1)
	require.Equal(t, "checkout", checkouts()[0].Kind)
	require.Equal(t, domain.RoutePerson, checkouts()[0].Route)

	st, err := teststore.Open(h.ctx, teststore.LocationIn(h.data))
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	second := scheduler.NewLander(engine.New(st, engine.Options{DefaultRepository: h.repo}), h.wt, cfg)
	require.NoError(t, second.RunOnce(h.ctx))
	evs, err := h.eng.Events(h.ctx, engine.EventFilter{MissionID: m.ID, Types: []string{"landing.waiting_for_clean_checkout"}, Limit: 10})
	require.NoError(t, err)
	require.Len(t, evs, 2, "the second leader retried the landing")
	require.Len(t, checkouts(), 1, "the second leader raised the checkout escalation again")

	waits := func() int {
		evs, err := h.eng.Events(h.ctx, engine.EventFilter{MissionID: m.ID, Types: []string{"landing.waiting_for_clean_checkout"}, Limit: 10})
		require.NoError(t, err)
		return len(evs)
	}
	require.NoError(t, first.RunOnce(h.ctx))
	require.Equal(t, 3, waits(), "the first pass over a waiting landing retries it")
	require.NoError(t, first.RunOnce(h.ctx))
	require.Equal(t, 3, waits(), "then it is retried every 10 s, not on every pass")
	require.Len(t, checkouts(), 1)

	git(t, h.repo, "checkout", "--", "shared.txt")
	now = now.Add(11 * time.Second)
	require.NoError(t, first.RunOnce(h.ctx))
	require.Equal(t, domain.LandingLanded, h.mission(m.ID).Landing)
	body, ok := h.file("shared.txt")
	require.True(t, ok)
	require.Equal(t, "line one, edited\n", body)
	require.Empty(t, checkouts(), "landing closed the checkout escalation")
}

// The landing service applies the repository's landing policy on its own: approval waits for
// approve_landing with one approval escalation (a second leader's pass raises none), then
// lands; none leaves the branch for a person.
func TestLander_RunOnceAppliesTheLandingPolicy(t *testing.T) {
	h := newHarness(t)
	approvalRepo, noneRepo := h.repo, makeRepo(t)
	cfg := scheduler.Config{DataDir: h.data, Repositories: []scheduler.RepoPolicy{
		{Path: approvalRepo, Landing: scheduler.LandingApproval}, {Path: noneRepo, Landing: scheduler.LandingNone}}}
	complete := func(repo, file string) domain.Mission {
		m := h.create(engine.MissionSpec{Title: "add " + file, Repository: repo, WriteArea: []string{file}})
		c, err := h.s.Pull().Claim(h.ctx, engine.ClaimRequest{AgentID: "worker", Repository: repo})
		require.NoError(t, err)
		require.Equal(t, m.ID, c.Mission.ID)
		require.NoError(t, os.WriteFile(filepath.Join(c.Workspace.Path, file), []byte(file+"\n"), 0o644))
		git(t, c.Workspace.Path, "add", file)
		git(t, c.Workspace.Path, "commit", "-q", "-m", "add "+file)
		_, err = h.eng.Complete(h.ctx, c.Mission.Fence(), domain.WorkerResult{Summary: "added"})
		require.NoError(t, err)
		return m
	}
	gated, left := complete(approvalRepo, "gated.txt"), complete(noneRepo, "left.txt")

	require.NoError(t, scheduler.NewLander(h.eng, h.wt, cfg).RunOnce(h.ctx))
	require.NoError(t, scheduler.NewLander(h.eng, h.wt, cfg).RunOnce(h.ctx))
	require.Equal(t, domain.LandingApproval, h.mission(gated.ID).Landing)
	require.Equal(t, domain.LandingLeft, h.mission(left.ID).Landing)
	escs, err := h.eng.Escalations(h.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: gated.ID})
	require.NoError(t, err)
	require.Len(t, escs, 1)
	require.Equal(t, "approval", escs[0].Kind)

	_, err = h.eng.ApproveLanding(h.ctx, gated.ID, "looks good", "person")
	require.NoError(t, err)
	require.NoError(t, scheduler.NewLander(h.eng, h.wt, cfg).RunOnce(h.ctx))
	require.Equal(t, domain.LandingLanded, h.mission(gated.ID).Landing)
	_, ok := h.file("gated.txt")
	require.True(t, ok, "the approved mission landed on main")
	escs, err = h.eng.Escalations(h.ctx, engine.EscalationFilter{State: domain.EscalationOpen, MissionID: gated.ID})
	require.NoError(t, err)
	require.Empty(t, escs, "landing closed the approval escalation")
	out := git(t, noneRepo, "log", "--oneline", "main")
	require.NotContains(t, out, "left.txt", "policy none lands nothing")
}
