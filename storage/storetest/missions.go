package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseMissions covers MissionInsert, MissionGet, MissionByIdempotencyKey, MissionUpdate,
// MissionDelete and MissionCounts.
func exerciseMissions(t *testing.T, open Opener) {
	group(t, "MissionInsert", func(t *testing.T) {
		run(t, "RoundTripsEveryField", open, func(t *testing.T, e *env) {
			m := fullMission(e, "m1")
			e.insert(m)
			requireSameMission(t, *m, e.get("m1"))
		})
		run(t, "ZeroFieldsStayZero", open, func(t *testing.T, e *env) {
			m := e.mission("m1", exclusive)
			e.insert(m)
			got := e.get("m1")
			requireSameMission(t, *m, got)
			require.Nil(t, got.WriteArea, "no write area (exclusive) stays nil")
			require.True(t, got.Deadline.IsZero() && got.NotBefore.IsZero() && got.StartedAt.IsZero() && got.Lease.ExpiresAt.IsZero())
			require.Nil(t, got.Result)
			require.Nil(t, got.Progress)
		})
		run(t, "DuplicateID", open, func(t *testing.T, e *env) {
			e.add("m1")
			err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.MissionInsert(e.ctx, e.mission("m1")) })
			require.ErrorIs(t, err, domain.ErrDuplicateID)
			require.Equal(t, "mission m1", e.get("m1").Title, "the first row stays")
		})
		run(t, "DuplicateIdempotencyKey", open, func(t *testing.T, e *env) {
			e.add("m1", func(m *domain.Mission) { m.IdempotencyKey = "k" })
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				return tx.MissionInsert(e.ctx, e.mission("m2", func(m *domain.Mission) { m.IdempotencyKey = "k" }))
			})
			require.ErrorIs(t, err, domain.ErrDuplicateID)
			e.view(func(r engine.Reader) error {
				_, err := r.MissionGet(e.ctx, "m2")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
		run(t, "ManyWithoutIdempotencyKey", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.add("m2") // an empty key is no key: it does not collide
			require.Len(t, listAll(e, engine.MissionFilter{}), 2)
		})
	})

	group(t, "MissionGet", func(t *testing.T) {
		run(t, "NotFound", open, func(t *testing.T, e *env) {
			e.view(func(r engine.Reader) error {
				_, err := r.MissionGet(e.ctx, "nope")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})

	group(t, "MissionByIdempotencyKey", func(t *testing.T) {
		run(t, "FindsByKey", open, func(t *testing.T, e *env) {
			e.add("m1", func(m *domain.Mission) { m.IdempotencyKey = "key-1" })
			e.add("m2", func(m *domain.Mission) { m.IdempotencyKey = "key-2" })
			e.view(func(r engine.Reader) error {
				m, err := r.MissionByIdempotencyKey(e.ctx, "key-2")
				require.NoError(t, err)
				require.Equal(t, "m2", m.ID)
				_, err = r.MissionByIdempotencyKey(e.ctx, "key-3")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})

	group(t, "MissionSet", func(t *testing.T) {
		run(t, "WritesOnlyTheNamedFields", open, func(t *testing.T, e *env) {
			e.add("m1")
			before := e.get("m1")
			row := before
			row.Title, row.Priority, row.Brief = "new title", 7, "new brief"
			e.update(func(tx engine.Tx) error {
				return tx.MissionSet(e.ctx, engine.MissionChange{Row: &row, From: engine.Guard{State: before.State, Epoch: before.Lease.Epoch},
					Set: engine.FieldTitle | engine.FieldPriority})
			})
			got := e.get("m1")
			require.Equal(t, "new title", got.Title)
			require.Equal(t, 7, got.Priority)
			require.Equal(t, before.Brief, got.Brief, "a field not named is not written")
		})
		run(t, "WritesEveryMutableField", open, func(t *testing.T, e *env) {
			stored := *e.add("m1")
			want := fullMission(e, "m1")
			// Set at insert only: the mission's identity and where it belongs.
			want.CreatedAt, want.VoyageID, want.ParentID, want.IdempotencyKey = stored.CreatedAt, stored.VoyageID, stored.ParentID, stored.IdempotencyKey
			want.Repository, want.SubjectID = stored.Repository, stored.SubjectID
			e.update(func(tx engine.Tx) error {
				return tx.MissionSet(e.ctx, engine.MissionChange{Row: want, From: engine.Guard{State: domain.StatePending, Epoch: 0}, Set: engine.AllMissionFields})
			})
			requireSameMission(t, *want, e.get("m1"))
		})
		run(t, "ClearsFields", open, func(t *testing.T, e *env) {
			full := fullMission(e, "m1")
			e.insert(full)
			cleared := e.mission("m1", exclusive)
			cleared.CreatedAt, cleared.ParentID, cleared.IdempotencyKey, cleared.SubjectID = full.CreatedAt, full.ParentID, full.IdempotencyKey, full.SubjectID
			e.update(func(tx engine.Tx) error {
				return tx.MissionSet(e.ctx, engine.MissionChange{Row: cleared, From: engine.Guard{State: full.State, Epoch: full.Lease.Epoch}, Set: engine.AllMissionFields})
			})
			got := e.get("m1")
			require.Nil(t, got.WriteArea)
			require.Nil(t, got.Checkpoint)
			require.Nil(t, got.Result)
			require.Nil(t, got.LastFailure)
			require.Nil(t, got.Decision)
			require.Empty(t, got.Lease.Owner)
			require.True(t, got.Lease.ExpiresAt.IsZero() && got.Deadline.IsZero() && got.FinishedAt.IsZero())
		})
		run(t, "GuardRefusesAnotherState", open, func(t *testing.T, e *env) {
			e.add("m1")
			requireGuardMiss(e, "m1", engine.Guard{State: domain.StateLeased, Epoch: 0})
		})
		run(t, "GuardRefusesAStaleEpoch", open, func(t *testing.T, e *env) {
			e.add("m1", leasedTo("a", 3, t0.Add(time.Minute)))
			requireGuardMiss(e, "m1", engine.Guard{State: domain.StateLeased, Epoch: 2})
			requireGuardMiss(e, "m1", engine.Guard{State: domain.StateLeased, Epoch: 4})
		})
		run(t, "GuardRefusesAMissingMission", open, func(t *testing.T, e *env) {
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				return tx.MissionSet(e.ctx, engine.MissionChange{Row: e.mission("m9"), From: engine.Guard{State: domain.StatePending}, Set: engine.AllMissionFields})
			})
			require.ErrorIs(t, err, domain.ErrGuard)
		})
		run(t, "StaleWriterLosesToTheOneThatMovedTheEpoch", open, func(t *testing.T, e *env) {
			e.add("m1", leasedTo("a", 1, t0.Add(time.Minute)))
			stale := e.get("m1")
			e.set("m1", func(m *domain.Mission) { m.Lease.Epoch, m.Lease.Owner = 2, "b" })
			stale.Title = "stale"
			err := e.s.Update(e.ctx, func(tx engine.Tx) error {
				return tx.MissionSet(e.ctx, engine.MissionChange{Row: &stale, From: engine.Guard{State: domain.StateLeased, Epoch: 1}, Set: engine.AllMissionFields})
			})
			require.ErrorIs(t, err, domain.ErrGuard)
			got := e.get("m1")
			require.Equal(t, "b", got.Lease.Owner)
			require.Equal(t, "mission m1", got.Title)
		})
	})

	group(t, "MissionDelete", func(t *testing.T) {
		run(t, "Deletes", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.update(func(tx engine.Tx) error { return tx.MissionDelete(e.ctx, "m1") })
			e.view(func(r engine.Reader) error {
				_, err := r.MissionGet(e.ctx, "m1")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
		run(t, "NotFound", open, func(t *testing.T, e *env) {
			err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.MissionDelete(e.ctx, "nope") })
			require.ErrorIs(t, err, domain.ErrNotFound)
		})
		run(t, "TakesItsEdgesWriteAreasAndHoldWithIt", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.add("m2")
			e.edge("m2", "m1", domain.EdgeHard, domain.SourceUser)
			e.update(func(tx engine.Tx) error { return tx.WriteAreaSet(e.ctx, "m1", "/repo", []string{"m1/"}) })
			e.update(func(tx engine.Tx) error {
				return tx.HoldUpsert(e.ctx, &engine.Hold{MissionID: "m1", Reason: engine.Reason{Code: engine.WhyQueued}, UpdatedAt: t0})
			})
			e.update(func(tx engine.Tx) error { return tx.MissionDelete(e.ctx, "m1") })
			e.view(func(r engine.Reader) error {
				deps, err := r.DependenciesOf(e.ctx, "m2")
				require.NoError(t, err)
				require.Empty(t, deps)
				_, err = r.HoldGet(e.ctx, "m1")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
			require.Empty(t, overlapIDs(e, "/repo", "m1/"))
		})
	})

	group(t, "MissionCounts", func(t *testing.T) {
		run(t, "FollowInsertUpdateAndDelete", open, func(t *testing.T, e *env) {
			requireCounts(e, map[domain.MissionState]int{})
			e.add("m1")
			e.add("m2")
			e.add("m3", inState(domain.StateCompleted))
			requireCounts(e, map[domain.MissionState]int{domain.StatePending: 2, domain.StateCompleted: 1})
			e.set("m1", func(m *domain.Mission) { m.State = domain.StateRunning })
			requireCounts(e, map[domain.MissionState]int{domain.StatePending: 1, domain.StateRunning: 1, domain.StateCompleted: 1})
			e.set("m1", func(m *domain.Mission) { m.Title = "same state" })
			requireCounts(e, map[domain.MissionState]int{domain.StatePending: 1, domain.StateRunning: 1, domain.StateCompleted: 1})
			e.update(func(tx engine.Tx) error { return tx.MissionDelete(e.ctx, "m3") })
			requireCounts(e, map[domain.MissionState]int{domain.StatePending: 1, domain.StateRunning: 1})
		})
		run(t, "SeenInsideTheWritingTransaction", open, func(t *testing.T, e *env) {
			var c map[domain.MissionState]int
			e.update(func(tx engine.Tx) error {
				if err := tx.MissionInsert(e.ctx, e.mission("m1")); err != nil {
					return err
				}
				var err error
				c, err = tx.MissionCounts(e.ctx)
				return err
			})
			require.Equal(t, map[domain.MissionState]int{domain.StatePending: 1}, nonZero(c))
		})
	})
}

// fullMission builds a mission with every field set, leased at epoch 4.
func fullMission(e *env, id string) *domain.Mission {
	pct := 42.5
	at := e.next()
	return &domain.Mission{ID: id, VoyageID: "", ParentID: "parent-" + id, IdempotencyKey: "idem-" + id, Key: "client-" + id,
		Title: "full " + id, Brief: "a brief with ünïcode and \"quotes\"", Repository: "/repo", TargetBranch: "main",
		Priority: 7, Kind: domain.KindRepair, SubjectID: "subject-" + id, Persona: "implementer",
		Capabilities: []string{"go", "sql"}, WriteArea: []string{"a/", "b/c.go"},
		ModelPolicy: domain.ModelPolicy{Mode: domain.ModeAgentSelect, Allowed: []string{"m1", "m2"}},
		Workspace:   "worktree", Review: "required", AcceptanceCriteria: []string{"tests pass", "docs"},
		Deadline: at.Add(time.Hour), RetryBudget: 5, CostLimitUSD: 2.5,
		State: domain.StateRunning, Attempt: 4, AttemptsUsed: 3, Abandons: 1, Contacted: true,
		Lease:   domain.Lease{Owner: "agent-1", ExpiresAt: at.Add(30 * time.Second), Epoch: 4},
		Profile: "claude", NotBefore: at.Add(time.Second), WaitReason: "checkout", Preempt: true, Serial: true,
		Checkpoint: json.RawMessage(`{"step": 3, "files": ["a"]}`),
		Progress:   &domain.Progress{Percent: &pct, Message: "half", At: at.Add(2 * time.Second)},
		Result: &domain.WorkerResult{Status: "failed", Summary: "s", Artifacts: []string{"x"}, Evidence: []string{"y"},
			Failure: &domain.Failure{Kind: "test", Tool: "go test"}, Usage: &domain.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.25},
			Verdict: "changes", Findings: []domain.Finding{{Severity: "minor", Path: "a.go", Line: 3}}},
		LastFailure:   &domain.Failure{Kind: "build", Diagnostic: "undefined: x", Location: "a.go:1", Summary: "build"},
		LastSignature: "sig", Decision: &domain.Decision{Kind: domain.DecisionRetry, Reason: "flaky", At: at},
		Landing: domain.LandingReview, Skipped: true, // VoyageActive is derived by the store from the voyage (none here)
		Usage:        domain.Usage{InputTokens: 100, OutputTokens: 50, CostUSD: 1.25},
		EscalationID: "esc-" + id, DeadlineEscalated: true, Run: json.RawMessage(`{"pid": 12, "dir": "/tmp/x"}`),
		CreatedAt: at, UpdatedAt: at.Add(3 * time.Second), StartedAt: at.Add(4 * time.Second), FinishedAt: at.Add(5 * time.Second)}
}

// requireSameMission compares two missions field by field, times by instant and raw JSON by
// value.
func requireSameMission(t *testing.T, want, got domain.Mission) {
	t.Helper()
	require.Equal(t, normMission(t, want), normMission(t, got))
}

func normMission(t *testing.T, m domain.Mission) domain.Mission {
	for _, p := range []*time.Time{&m.Deadline, &m.NotBefore, &m.Lease.ExpiresAt, &m.CreatedAt, &m.UpdatedAt, &m.StartedAt, &m.FinishedAt} {
		*p = normTime(*p)
	}
	if m.Progress != nil {
		p := *m.Progress
		p.At = normTime(p.At)
		m.Progress = &p
	}
	if m.Decision != nil {
		d := *m.Decision
		d.At = normTime(d.At)
		m.Decision = &d
	}
	m.Checkpoint, m.Run = normJSON(t, m.Checkpoint), normJSON(t, m.Run)
	return m
}

func normTime(at time.Time) time.Time {
	if at.IsZero() {
		return time.Time{}
	}
	return at.UTC()
}

// normJSON re-encodes raw JSON canonically (a backend may store it as a value, e.g. jsonb).
func normJSON(t *testing.T, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}

// requireGuardMiss requires a guarded update of id under g to fail with ErrGuard and to leave
// the row as it was.
func requireGuardMiss(e *env, id string, g engine.Guard) {
	e.t.Helper()
	before := e.get(id)
	m := before
	m.Title = "should not be written"
	err := e.s.Update(e.ctx, func(tx engine.Tx) error {
		return tx.MissionSet(e.ctx, engine.MissionChange{Row: &m, From: g, Set: engine.AllMissionFields})
	})
	require.ErrorIs(e.t, err, domain.ErrGuard)
	requireSameMission(e.t, before, e.get(id))
}

// requireCounts requires MissionCounts to equal want, zero counts aside.
func requireCounts(e *env, want map[domain.MissionState]int) {
	e.t.Helper()
	e.view(func(r engine.Reader) error {
		c, err := r.MissionCounts(e.ctx)
		require.NoError(e.t, err)
		require.Equal(e.t, want, nonZero(c))
		return nil
	})
}

// listAll pages through MissionList with f until it is exhausted.
func listAll(e *env, f engine.MissionFilter) []domain.Mission {
	e.t.Helper()
	var out []domain.Mission
	for range 1000 {
		var page []domain.Mission
		e.view(func(r engine.Reader) error {
			var err error
			page, err = r.MissionList(e.ctx, f)
			return err
		})
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		f.Cursor = page[len(page)-1].ID
	}
	e.t.Fatal("MissionList never ran out of pages")
	return nil
}
