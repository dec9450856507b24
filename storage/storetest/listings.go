package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseListings covers MissionList (filters, cursor, limit), MissionsLandingQueue,
// MissionsLandingAwaiting and MissionsPastDeadline.
func exerciseListings(t *testing.T, open Opener) {
	group(t, "MissionList", func(t *testing.T) {
		run(t, "PagesByCursorInIDOrder", open, func(t *testing.T, e *env) {
			var want []string
			for i := range 7 {
				id := fmt.Sprintf("m%02d", i)
				want = append(want, id)
				e.add(id)
			}
			var pages [][]string
			f := engine.MissionFilter{Limit: 3}
			for {
				page := listPage(e, f)
				if len(page) == 0 {
					break
				}
				pages = append(pages, ids(page))
				f.Cursor = page[len(page)-1].ID
			}
			require.Equal(t, [][]string{want[0:3], want[3:6], want[6:7]}, pages)
		})
		run(t, "DefaultAndCappedLimit", open, func(t *testing.T, e *env) {
			ms := make([]*domain.Mission, 0, 102)
			for i := range 102 {
				ms = append(ms, e.mission(fmt.Sprintf("m%04d", i)))
			}
			e.insert(ms...)
			require.Len(t, listPage(e, engine.MissionFilter{}), 100, "no limit: 100")
			require.Len(t, listPage(e, engine.MissionFilter{Limit: -1}), 100)
			require.Len(t, listPage(e, engine.MissionFilter{Limit: 1001}), 100, "over 1,000: 100")
			require.Len(t, listPage(e, engine.MissionFilter{Limit: 101}), 101)
		})
		run(t, "Filters", open, func(t *testing.T, e *env) {
			e.voyage("v")
			e.add("a", inVoyage("v"), func(m *domain.Mission) { m.Persona = "reviewer" })
			e.add("b", inVoyage("v"), inState(domain.StateRunning), inRepo("/other"))
			e.add("c", inState(domain.StateCompleted), func(m *domain.Mission) { m.Landing = domain.LandingPending })
			e.add("d", func(m *domain.Mission) { m.Kind, m.SubjectID, m.ParentID = domain.KindReview, "c", "a" })
			e.add("e", inState(domain.StateFailed), inVoyage("v"))
			for name, c := range map[string]struct {
				f    engine.MissionFilter
				want []string
			}{
				"none":          {engine.MissionFilter{}, []string{"a", "b", "c", "d", "e"}},
				"one state":     {engine.MissionFilter{States: []domain.MissionState{domain.StatePending}}, []string{"a", "d"}},
				"states":        {engine.MissionFilter{States: []domain.MissionState{domain.StateFailed, domain.StateRunning, domain.StateFailed}}, []string{"b", "e"}},
				"voyage":        {engine.MissionFilter{VoyageID: "v"}, []string{"a", "b", "e"}},
				"voyage+state":  {engine.MissionFilter{VoyageID: "v", States: []domain.MissionState{domain.StatePending, domain.StateFailed}}, []string{"a", "e"}},
				"repository":    {engine.MissionFilter{Repository: "/other"}, []string{"b"}},
				"persona":       {engine.MissionFilter{Persona: "reviewer"}, []string{"a"}},
				"kind":          {engine.MissionFilter{Kind: domain.KindReview}, []string{"d"}},
				"parent":        {engine.MissionFilter{ParentID: "a"}, []string{"d"}},
				"subject":       {engine.MissionFilter{SubjectID: "c"}, []string{"d"}},
				"landing":       {engine.MissionFilter{Landing: domain.LandingPending}, []string{"c"}},
				"landing none":  {engine.MissionFilter{Landing: domain.LandingNone, States: []domain.MissionState{domain.StatePending}}, []string{"a", "d"}},
				"nothing":       {engine.MissionFilter{Repository: "/nowhere"}, nil},
				"after cursor":  {engine.MissionFilter{Cursor: "b"}, []string{"c", "d", "e"}},
				"kind+repo":     {engine.MissionFilter{Kind: domain.KindWork, Repository: "/repo"}, []string{"a", "c", "e"}},
				"states paging": {engine.MissionFilter{States: []domain.MissionState{domain.StatePending, domain.StateFailed}, Limit: 1}, []string{"a", "d", "e"}},
			} {
				require.Equal(t, c.want, ids(listAll(e, c.f)), name)
			}
		})
	})

	group(t, "MissionsLandingQueue", func(t *testing.T) {
		run(t, "CompletedMissionsWhoseLandingGoesOnOldestFirst", open, func(t *testing.T, e *env) {
			for i, l := range []domain.LandingState{domain.LandingPending, domain.LandingLanded, domain.LandingApproved,
				domain.LandingReview, domain.LandingWaiting, domain.LandingConflicted, domain.LandingApproval,
				domain.LandingLeft, domain.LandingRepair, domain.LandingNotRequired} {
				e.add(fmt.Sprintf("m%02d-%s", i, l), inState(domain.StateCompleted), func(m *domain.Mission) { m.Landing = l })
			}
			e.add("m99-running", inState(domain.StateRunning), func(m *domain.Mission) { m.Landing = domain.LandingPending })
			e.view(func(r engine.Reader) error {
				q, err := r.MissionsLandingQueue(e.ctx, 100)
				require.NoError(t, err)
				require.Equal(t, []string{"m00-pending", "m02-approved", "m03-review", "m04-waiting"}, ids(q))
				q, err = r.MissionsLandingQueue(e.ctx, 2)
				require.NoError(t, err)
				require.Equal(t, []string{"m00-pending", "m02-approved"}, ids(q))
				return nil
			})
		})
	})

	group(t, "MissionsLandingAwaiting", func(t *testing.T) {
		run(t, "CompletedMissionsWaitingForApprovalOrARepairOldestFirst", open, func(t *testing.T, e *env) {
			for i, l := range []domain.LandingState{domain.LandingRepair, domain.LandingPending, domain.LandingLanded, domain.LandingApproved,
				domain.LandingReview, domain.LandingWaiting, domain.LandingConflicted, domain.LandingApproval,
				domain.LandingLeft, domain.LandingNotRequired} {
				e.add(fmt.Sprintf("m%02d-%s", i, l), inState(domain.StateCompleted), func(m *domain.Mission) { m.Landing = l })
			}
			e.add("m99-running", inState(domain.StateRunning), func(m *domain.Mission) { m.Landing = domain.LandingApproval })
			e.view(func(r engine.Reader) error {
				q, err := r.MissionsLandingAwaiting(e.ctx, 100)
				require.NoError(t, err)
				require.Equal(t, []string{"m00-repair", "m07-approval"}, ids(q))
				q, err = r.MissionsLandingAwaiting(e.ctx, 1)
				require.NoError(t, err)
				require.Equal(t, []string{"m00-repair"}, ids(q))
				return nil
			})
		})
	})

	group(t, "MissionsPastDeadline", func(t *testing.T) {
		run(t, "UnfinishedAndNotYetEscalated", open, func(t *testing.T, e *env) {
			past, future := t0.Add(time.Minute), t0.Add(time.Hour)
			e.add("late", func(m *domain.Mission) { m.Deadline = past })
			e.add("late-running", inState(domain.StateRunning), func(m *domain.Mission) { m.Deadline = past })
			e.add("escalated", func(m *domain.Mission) { m.Deadline, m.DeadlineEscalated = past, true })
			e.add("finished", inState(domain.StateCompleted), func(m *domain.Mission) { m.Deadline = past })
			e.add("cancelled", inState(domain.StateCancelled), func(m *domain.Mission) { m.Deadline = past })
			e.add("on-time", func(m *domain.Mission) { m.Deadline = future })
			e.add("no-deadline")
			now := t0.Add(10 * time.Minute)
			e.view(func(r engine.Reader) error {
				ms, err := r.MissionsPastDeadline(e.ctx, now, 100)
				require.NoError(t, err)
				require.ElementsMatch(t, []string{"late", "late-running"}, ids(ms))
				ms, err = r.MissionsPastDeadline(e.ctx, now, 1)
				require.NoError(t, err)
				require.Len(t, ms, 1)
				return nil
			})
		})
	})
}

// listPage reads one page of MissionList.
func listPage(e *env, f engine.MissionFilter) []domain.Mission {
	e.t.Helper()
	var out []domain.Mission
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.MissionList(e.ctx, f)
		return err
	})
	return out
}
