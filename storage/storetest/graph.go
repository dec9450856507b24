package storetest

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseGraph covers DependencyInsert, DependencyDeleteConflicts, DependenciesOf,
// DependentsOf, WriteAreaSet and WriteAreaOverlaps.
func exerciseGraph(t *testing.T, open Opener) {
	group(t, "DependencyInsert", func(t *testing.T) {
		run(t, "StoresEdgesBothWaysReadable", open, func(t *testing.T, e *env) {
			e.add("a")
			e.add("b")
			e.add("c")
			e.edge("c", "a", domain.EdgeHard, domain.SourceUser)
			e.edge("c", "b", domain.EdgeSoft, domain.SourceArchitect)
			e.edge("c", "a", domain.EdgeSerialization, domain.SourceUser) // another type of the same pair
			e.view(func(r engine.Reader) error {
				of, err := r.DependenciesOf(e.ctx, "c")
				require.NoError(t, err)
				require.ElementsMatch(t, []string{"a/hard", "a/serialization", "b/soft"}, edgeKeys(of, false))
				for _, d := range of {
					require.Equal(t, "c", d.MissionID)
					require.Equal(t, "test", d.Reason)
					require.False(t, d.CreatedAt.IsZero())
				}
				to, err := r.DependentsOf(e.ctx, "a")
				require.NoError(t, err)
				require.ElementsMatch(t, []string{"c/hard", "c/serialization"}, edgeKeys(to, true))
				none, err := r.DependenciesOf(e.ctx, "a")
				require.NoError(t, err)
				require.Empty(t, none)
				return nil
			})
		})
		run(t, "DuplicateEdge", open, func(t *testing.T, e *env) {
			e.add("a")
			e.add("b")
			e.edge("b", "a", domain.EdgeHard, domain.SourceUser)
			requireEdgeDuplicate(e, domain.Dependency{MissionID: "b", DependsOn: "a", Type: domain.EdgeHard, Source: domain.SourceUser})
			requireEdgeDuplicate(e, domain.Dependency{MissionID: "b", DependsOn: "a", Type: domain.EdgeHard, Source: domain.SourceScheduler})
		})
		run(t, "CallerEdgeReplacesSchedulerEdge", open, func(t *testing.T, e *env) {
			e.add("a")
			e.add("b")
			e.edge("b", "a", domain.EdgeConflict, domain.SourceScheduler)
			e.update(func(tx engine.Tx) error {
				return tx.DependencyInsert(e.ctx, domain.Dependency{MissionID: "b", DependsOn: "a", Type: domain.EdgeConflict,
					Source: domain.SourceUser, Reason: "mine", CreatedAt: e.next()})
			})
			deps := depsOf(e, "b")
			require.Len(t, deps, 1)
			require.Equal(t, domain.SourceUser, deps[0].Source)
			require.Equal(t, "mine", deps[0].Reason)
			requireEdgeDuplicate(e, domain.Dependency{MissionID: "b", DependsOn: "a", Type: domain.EdgeConflict, Source: domain.SourceScheduler})
		})
	})

	group(t, "DependencyDeleteConflicts", func(t *testing.T) {
		run(t, "OnlySchedulerConflictsTouchingTheMission", open, func(t *testing.T, e *env) {
			for _, id := range []string{"a", "b", "c", "d"} {
				e.add(id)
			}
			e.edge("a", "b", domain.EdgeConflict, domain.SourceScheduler)
			e.edge("c", "a", domain.EdgeConflict, domain.SourceScheduler)
			e.edge("a", "d", domain.EdgeConflict, domain.SourceUser)
			e.edge("a", "c", domain.EdgeHard, domain.SourceScheduler)
			e.edge("b", "c", domain.EdgeConflict, domain.SourceScheduler)
			var gone []domain.Dependency
			e.update(func(tx engine.Tx) error {
				var err error
				gone, err = tx.DependencyDeleteConflicts(e.ctx, "a")
				return err
			})
			require.ElementsMatch(t, []string{"a→b", "c→a"}, edgePairs(gone))
			require.ElementsMatch(t, []string{"d/conflict", "c/hard"}, edgeKeys(depsOf(e, "a"), false))
			require.ElementsMatch(t, []string{"c/conflict"}, edgeKeys(depsOf(e, "b"), false))
			e.update(func(tx engine.Tx) error {
				var err error
				gone, err = tx.DependencyDeleteConflicts(e.ctx, "a")
				return err
			})
			require.Empty(t, gone)
		})
	})

	group(t, "WriteAreaOverlaps", func(t *testing.T) {
		run(t, "PrefixesRelatedEitherWayInTheRepository", open, func(t *testing.T, e *env) {
			for id, c := range map[string]struct {
				repo     string
				prefixes []string
			}{
				"parent":  {"/repo", []string{"src/"}},
				"child":   {"/repo", []string{"src/engine/store.go"}},
				"sibling": {"/repo", []string{"docs/", "srcx/"}},
				"elsewhr": {"/other", []string{"src/"}},
				"unicode": {"/repo", []string{"sr€/"}},
			} {
				e.add(id, inRepo(c.repo), func(m *domain.Mission) { m.WriteArea = c.prefixes })
				e.update(func(tx engine.Tx) error { return tx.WriteAreaSet(e.ctx, id, c.repo, c.prefixes) })
			}
			require.Equal(t, []string{"child", "parent"}, overlapIDs(e, "/repo", "src/engine/"))
			require.Equal(t, []string{"parent"}, overlapIDs(e, "/repo", "src/api/x.go"))
			require.Equal(t, []string{"child", "parent", "sibling"}, overlapIDs(e, "/repo", "src/engine/store.go", "docs/a.md"))
			require.Equal(t, []string{"child", "parent", "sibling", "unicode"}, overlapIDs(e, "/repo", "s"))
			require.Empty(t, overlapIDs(e, "/repo", "tools/"))
			require.Equal(t, []string{"elsewhr"}, overlapIDs(e, "/other", "src/a"))
			e.view(func(r engine.Reader) error {
				o, err := r.WriteAreaOverlaps(e.ctx, "/repo", []string{"src/engine/store.go"})
				require.NoError(t, err)
				require.ElementsMatch(t, []engine.Overlap{
					{MissionID: "child", WriteArea: []string{"src/engine/store.go"}},
					{MissionID: "parent", WriteArea: []string{"src/"}}}, o)
				return nil
			})
		})
		run(t, "WriteAreaSetReplacesAndClears", open, func(t *testing.T, e *env) {
			e.add("m")
			e.update(func(tx engine.Tx) error { return tx.WriteAreaSet(e.ctx, "m", "/repo", []string{"a/", "b/"}) })
			require.Equal(t, []string{"m"}, overlapIDs(e, "/repo", "a/x"))
			e.update(func(tx engine.Tx) error { return tx.WriteAreaSet(e.ctx, "m", "/repo", []string{"b/", "b/"}) })
			require.Empty(t, overlapIDs(e, "/repo", "a/x"))
			require.Equal(t, []string{"m"}, overlapIDs(e, "/repo", "b/y"))
			e.update(func(tx engine.Tx) error { return tx.WriteAreaSet(e.ctx, "m", "/repo", nil) })
			require.Empty(t, overlapIDs(e, "/repo", "b/y"))
		})
	})
}

func requireEdgeDuplicate(e *env, d domain.Dependency) {
	e.t.Helper()
	before := depsOf(e, d.MissionID)
	d.CreatedAt = e.next()
	err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.DependencyInsert(e.ctx, d) })
	require.ErrorIs(e.t, err, domain.ErrDuplicateID)
	require.Equal(e.t, before, depsOf(e, d.MissionID))
}

func depsOf(e *env, id string) []domain.Dependency {
	e.t.Helper()
	var out []domain.Dependency
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.DependenciesOf(e.ctx, id)
		return err
	})
	return out
}

// edgeKeys names edges "other/type": the depended-on mission (or, reverse, the dependent).
func edgeKeys(ds []domain.Dependency, reverse bool) []string {
	var out []string
	for _, d := range ds {
		other := d.DependsOn
		if reverse {
			other = d.MissionID
		}
		out = append(out, other+"/"+string(d.Type))
	}
	return out
}

func edgePairs(ds []domain.Dependency) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.MissionID+"→"+d.DependsOn)
	}
	return out
}

// overlapIDs returns the sorted ids WriteAreaOverlaps finds for prefixes.
func overlapIDs(e *env, repo string, prefixes ...string) []string {
	e.t.Helper()
	var out []string
	e.view(func(r engine.Reader) error {
		o, err := r.WriteAreaOverlaps(e.ctx, repo, prefixes)
		for _, x := range o {
			out = append(out, x.MissionID)
		}
		return err
	})
	slices.Sort(out)
	return out
}
