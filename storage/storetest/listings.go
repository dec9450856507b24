package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// exerciseListings covers MissionList (filters, cursor, limit), MissionsLandingQueue and
// MissionsPastDeadline.
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
			ms := make([]*engine.Mission, 0, 102)
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
			e.add("a", inVoyage("v"), func(m *engine.Mission) { m.Persona = "reviewer" })
			e.add("b", inVoyage("v"), inState(engine.StateRunning), inRepo("/other"))
			e.add("c", inState(engine.StateCompleted), func(m *engine.Mission) { m.Landing = engine.LandingPending })
			e.add("d", func(m *engine.Mission) { m.Kind, m.SubjectID, m.ParentID = engine.KindReview, "c", "a" })
			e.add("e", inState(engine.StateFailed), inVoyage("v"))
			for name, c := range map[string]struct {
				f    engine.MissionFilter
				want []string
			}{
				"none":          {engine.MissionFilter{}, []string{"a", "b", "c", "d", "e"}},
				"one state":     {engine.MissionFilter{States: []engine.MissionState{engine.StatePending}}, []string{"a", "d"}},
				"states":        {engine.MissionFilter{States: []engine.MissionState{engine.StateFailed, engine.StateRunning, engine.StateFailed}}, []string{"b", "e"}},
				"voyage":        {engine.MissionFilter{VoyageID: "v"}, []string{"a", "b", "e"}},
				"voyage+state":  {engine.MissionFilter{VoyageID: "v", States: []engine.MissionState{engine.StatePending, engine.StateFailed}}, []string{"a", "e"}},
				"repository":    {engine.MissionFilter{Repository: "/other"}, []string{"b"}},
				"persona":       {engine.MissionFilter{Persona: "reviewer"}, []string{"a"}},
				"kind":          {engine.MissionFilter{Kind: engine.KindReview}, []string{"d"}},
				"parent":        {engine.MissionFilter{ParentID: "a"}, []string{"d"}},
				"subject":       {engine.MissionFilter{SubjectID: "c"}, []string{"d"}},
				"landing":       {engine.MissionFilter{Landing: engine.LandingPending}, []string{"c"}},
				"landing none":  {engine.MissionFilter{Landing: engine.LandingNone, States: []engine.MissionState{engine.StatePending}}, []string{"a", "d"}},
				"nothing":       {engine.MissionFilter{Repository: "/nowhere"}, nil},
				"after cursor":  {engine.MissionFilter{Cursor: "b"}, []string{"c", "d", "e"}},
				"kind+repo":     {engine.MissionFilter{Kind: engine.KindWork, Repository: "/repo"}, []string{"a", "c", "e"}},
				"states paging": {engine.MissionFilter{States: []engine.MissionState{engine.StatePending, engine.StateFailed}, Limit: 1}, []string{"a", "d", "e"}},
			} {
				require.Equal(t, c.want, ids(listAll(e, c.f)), name)
			}
		})
	})

	group(t, "MissionsLandingQueue", func(t *testing.T) {
		run(t, "CompletedMissionsWhoseLandingGoesOnOldestFirst", open, func(t *testing.T, e *env) {
			for i, l := range []engine.LandingState{engine.LandingPending, engine.LandingLanded, engine.LandingApproved,
				engine.LandingReview, engine.LandingWaiting, engine.LandingConflicted, engine.LandingApproval,
				engine.LandingLeft, engine.LandingRepair, engine.LandingNotRequired} {
				e.add(fmt.Sprintf("m%02d-%s", i, l), inState(engine.StateCompleted), func(m *engine.Mission) { m.Landing = l })
			}
			e.add("m99-running", inState(engine.StateRunning), func(m *engine.Mission) { m.Landing = engine.LandingPending })
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

	group(t, "MissionsPastDeadline", func(t *testing.T) {
		run(t, "UnfinishedAndNotYetEscalated", open, func(t *testing.T, e *env) {
			past, future := t0.Add(time.Minute), t0.Add(time.Hour)
			e.add("late", func(m *engine.Mission) { m.Deadline = past })
			e.add("late-running", inState(engine.StateRunning), func(m *engine.Mission) { m.Deadline = past })
			e.add("escalated", func(m *engine.Mission) { m.Deadline, m.DeadlineEscalated = past, true })
			e.add("finished", inState(engine.StateCompleted), func(m *engine.Mission) { m.Deadline = past })
			e.add("cancelled", inState(engine.StateCancelled), func(m *engine.Mission) { m.Deadline = past })
			e.add("on-time", func(m *engine.Mission) { m.Deadline = future })
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
func listPage(e *env, f engine.MissionFilter) []engine.Mission {
	e.t.Helper()
	var out []engine.Mission
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.MissionList(e.ctx, f)
		return err
	})
	return out
}
