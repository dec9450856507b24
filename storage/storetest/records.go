package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseRecords covers attempts (AttemptInsert, AttemptList, AttemptOutcomes), landings
// (LandingUpsert, LandingList), agents (AgentUpsert, AgentList, AgentsSeenSince,
// AgentCount), waves (WaveInsert, WaveLatest) and the pause flag (SetPaused, Paused).
func exerciseRecords(t *testing.T, open Opener) {
	group(t, "AttemptInsert", func(t *testing.T) {
		run(t, "RoundTripsAndListsByMission", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.add("m2")
			a1 := &domain.Attempt{MissionID: "m1", Attempt: 1, Epoch: 1, Agent: "a", Profile: "claude", Persona: "implementer",
				Outcome: "failed", Failure: &domain.Failure{Kind: "test", Summary: "red"}, Signature: "sig", Weight: 2,
				Usage: domain.Usage{InputTokens: 3, OutputTokens: 4, CostUSD: 0.5}, Summary: "it failed",
				StartedAt: e.next(), EndedAt: e.next()}
			a2 := &domain.Attempt{MissionID: "m1", Attempt: 2, Epoch: 2, Outcome: "completed", EndedAt: e.next()}
			other := &domain.Attempt{MissionID: "m2", Attempt: 1, Epoch: 1, Outcome: "abandoned", EndedAt: e.next()}
			e.update(func(tx engine.Tx) error {
				for _, a := range []*domain.Attempt{a2, a1, other} {
					if err := tx.AttemptInsert(e.ctx, a); err != nil {
						return err
					}
				}
				return nil
			})
			got := attempts(e, "m1")
			require.Len(t, got, 2)
			byAttempt := map[int]domain.Attempt{}
			for _, a := range got {
				byAttempt[a.Attempt] = a
			}
			requireSameAttempt(t, *a1, byAttempt[1])
			requireSameAttempt(t, *a2, byAttempt[2])
			require.Empty(t, attempts(e, "none"))
		})
		run(t, "DuplicateAttemptAndEpoch", open, func(t *testing.T, e *env) {
			e.add("m1")
			a := &domain.Attempt{MissionID: "m1", Attempt: 1, Epoch: 1, Outcome: "failed", EndedAt: t0}
			e.update(func(tx engine.Tx) error { return tx.AttemptInsert(e.ctx, a) })
			err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.AttemptInsert(e.ctx, a) })
			require.ErrorIs(t, err, domain.ErrDuplicateID)
		})
	})

	group(t, "AttemptOutcomes", func(t *testing.T) {
		run(t, "CountsPerProfileAndPersona", open, func(t *testing.T, e *env) {
			e.add("m1")
			rows := []domain.Attempt{
				{Attempt: 1, Profile: "claude", Persona: "implementer", Outcome: "completed"},
				{Attempt: 2, Profile: "claude", Persona: "implementer", Outcome: "failed"},
				{Attempt: 3, Profile: "claude", Persona: "reviewer", Outcome: "completed"},
				{Attempt: 4, Profile: "codex", Persona: "implementer", Outcome: "abandoned"},
				{Attempt: 5, Profile: "", Persona: "implementer", Outcome: "completed"}, // no profile: not counted
			}
			e.update(func(tx engine.Tx) error {
				for i := range rows {
					a := rows[i]
					a.MissionID, a.Epoch, a.EndedAt = "m1", int64(a.Attempt), e.next()
					if err := tx.AttemptInsert(e.ctx, &a); err != nil {
						return err
					}
				}
				return nil
			})
			e.view(func(r engine.Reader) error {
				o, err := r.AttemptOutcomes(e.ctx)
				require.NoError(t, err)
				require.ElementsMatch(t, []engine.OutcomeCount{
					{Profile: "claude", Persona: "implementer", Total: 2, Completed: 1},
					{Profile: "claude", Persona: "reviewer", Total: 1, Completed: 1},
					{Profile: "codex", Persona: "implementer", Total: 1, Completed: 0},
				}, o)
				return nil
			})
		})
	})

	group(t, "LandingUpsert", func(t *testing.T) {
		run(t, "InsertsThenReplacesPerAttempt", open, func(t *testing.T, e *env) {
			e.add("m1")
			l1 := &domain.Landing{MissionID: "m1", Attempt: 1, Status: "conflicted", TargetBranch: "main", ConflictPaths: []string{"a.go"},
				Detail: "conflict", At: e.next()}
			l2 := &domain.Landing{MissionID: "m1", Attempt: 2, Status: "checking", At: e.next()}
			e.update(func(tx engine.Tx) error {
				if err := tx.LandingUpsert(e.ctx, l1); err != nil {
					return err
				}
				return tx.LandingUpsert(e.ctx, l2)
			})
			l2b := &domain.Landing{MissionID: "m1", Attempt: 2, Status: "landed", TargetBranch: "main", Commit: "c0ffee",
				OldTarget: "aaa", NewTarget: "bbb", ChangedFiles: []string{"x.go", "y.go"}, OutsideWriteArea: []string{"y.go"},
				Detail: "ok", DurationMS: 1234, At: e.next()}
			e.update(func(tx engine.Tx) error { return tx.LandingUpsert(e.ctx, l2b) })
			got := landings(e, "m1")
			require.Len(t, got, 2)
			byAttempt := map[int]domain.Landing{}
			for _, l := range got {
				byAttempt[l.Attempt] = l
			}
			requireSameLanding(t, *l1, byAttempt[1])
			requireSameLanding(t, *l2b, byAttempt[2])
			require.Empty(t, landings(e, "none"))
		})
	})

	group(t, "AgentUpsert", func(t *testing.T) {
		run(t, "InsertsThenReplaces", open, func(t *testing.T, e *env) {
			a := &domain.Agent{ID: "a1", Kind: "external", Capabilities: []string{"go"}, Personas: []string{"reviewer"}, LastSeen: e.next()}
			e.update(func(tx engine.Tx) error { return tx.AgentUpsert(e.ctx, a) })
			b := &domain.Agent{ID: "a1", Kind: "managed", Profile: "claude", Capabilities: []string{"go", "sql"}, LastSeen: e.next()}
			e.update(func(tx engine.Tx) error { return tx.AgentUpsert(e.ctx, b) })
			got := agents(e)
			require.Len(t, got, 1)
			requireSameAgent(t, *b, got[0])
			e.view(func(r engine.Reader) error {
				n, err := r.AgentCount(e.ctx)
				require.NoError(t, err)
				require.Equal(t, 1, n)
				return nil
			})
		})
	})

	group(t, "AgentList", func(t *testing.T) {
		run(t, "CountsTheLiveMissionsEachHolds", open, func(t *testing.T, e *env) {
			e.update(func(tx engine.Tx) error {
				for _, id := range []string{"ext", "claude", "idle"} {
					if err := tx.AgentUpsert(e.ctx, &domain.Agent{ID: id, Kind: "external", LastSeen: t0}); err != nil {
						return err
					}
				}
				return nil
			})
			e.add("m1", leasedTo("ext", 1, t0.Add(time.Minute)))
			e.add("m2", leasedTo("ext", 1, t0.Add(time.Minute)), inState(domain.StateRunning))
			e.add("m3", leasedTo("scheduler", 1, t0.Add(time.Minute)), inState(domain.StateRunning), func(m *domain.Mission) { m.Profile = "claude" })
			e.add("m4", leasedTo("ext", 1, t0), inState(domain.StateCompleted))
			running := map[string]int{}
			for _, a := range agents(e) {
				running[a.ID] = a.Running
			}
			require.Equal(t, map[string]int{"ext": 2, "claude": 1, "idle": 0}, running)
		})
	})

	group(t, "AgentsSeenSince", func(t *testing.T) {
		run(t, "RecentFirstFromSince", open, func(t *testing.T, e *env) {
			e.update(func(tx engine.Tx) error {
				for i, id := range []string{"old", "mid", "new", "edge"} {
					seen := t0.Add(time.Duration(i) * time.Minute)
					if err := tx.AgentUpsert(e.ctx, &domain.Agent{ID: id, Kind: "external", LastSeen: seen}); err != nil {
						return err
					}
				}
				return nil
			})
			e.view(func(r engine.Reader) error {
				as, err := r.AgentsSeenSince(e.ctx, t0.Add(time.Minute))
				require.NoError(t, err)
				var got []string
				for _, a := range as {
					got = append(got, a.ID)
				}
				require.Equal(t, []string{"edge", "new", "mid"}, got, "seen at or after since, most recent first")
				return nil
			})
		})
		run(t, "AtMostAThousand", open, func(t *testing.T, e *env) {
			e.update(func(tx engine.Tx) error {
				for i := range 1001 {
					a := &domain.Agent{ID: fmt.Sprintf("a%04d", i), Kind: "external", LastSeen: t0.Add(time.Duration(i) * time.Millisecond)}
					if err := tx.AgentUpsert(e.ctx, a); err != nil {
						return err
					}
				}
				return nil
			})
			e.view(func(r engine.Reader) error {
				as, err := r.AgentsSeenSince(e.ctx, time.Time{})
				require.NoError(t, err)
				require.Len(t, as, 1000)
				require.Equal(t, "a1000", as[0].ID)
				return nil
			})
		})
	})

	group(t, "WaveInsert", func(t *testing.T) {
		run(t, "LatestIsTheLastInserted", open, func(t *testing.T, e *env) {
			e.view(func(r engine.Reader) error {
				_, err := r.WaveLatest(e.ctx)
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
			w1 := &domain.Wave{At: e.next(), Runnable: 1}
			score := &domain.Score{Profile: "claude", CapabilityOverlap: 1, Load: 0.5, Confidence: 0.8, PriorityBoost: 0.1, PreferredPersona: true, Total: 0.44}
			w2 := &domain.Wave{At: e.next(), Runnable: 3,
				Dispatched: []domain.WaveEntry{{MissionID: "m1", Profile: "claude", Score: score}},
				Held:       []domain.WaveEntry{{MissionID: "m2", Reason: "conflict"}}}
			e.update(func(tx engine.Tx) error {
				if err := tx.WaveInsert(e.ctx, w1); err != nil {
					return err
				}
				return tx.WaveInsert(e.ctx, w2)
			})
			require.Greater(t, w1.ID, int64(0))
			require.Greater(t, w2.ID, w1.ID)
			e.view(func(r engine.Reader) error {
				got, err := r.WaveLatest(e.ctx)
				require.NoError(t, err)
				got.At = normTime(got.At)
				require.Equal(t, *w2, got)
				return nil
			})
		})
	})

	group(t, "SetPaused", func(t *testing.T) {
		run(t, "Toggles", open, func(t *testing.T, e *env) {
			require.False(t, paused(e), "a new store is not paused")
			e.update(func(tx engine.Tx) error { return tx.SetPaused(e.ctx, true) })
			require.True(t, paused(e))
			e.update(func(tx engine.Tx) error { return tx.SetPaused(e.ctx, true) })
			require.True(t, paused(e))
			e.update(func(tx engine.Tx) error { return tx.SetPaused(e.ctx, false) })
			require.False(t, paused(e))
		})
	})
}

func attempts(e *env, id string) []domain.Attempt {
	e.t.Helper()
	var out []domain.Attempt
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.AttemptList(e.ctx, id)
		return err
	})
	return out
}

func requireSameAttempt(t *testing.T, want, got domain.Attempt) {
	t.Helper()
	for _, a := range []*domain.Attempt{&want, &got} {
		a.StartedAt, a.EndedAt = normTime(a.StartedAt), normTime(a.EndedAt)
	}
	require.Equal(t, want, got)
}

func landings(e *env, id string) []domain.Landing {
	e.t.Helper()
	var out []domain.Landing
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.LandingList(e.ctx, id)
		return err
	})
	return out
}

func requireSameLanding(t *testing.T, want, got domain.Landing) {
	t.Helper()
	want.At, got.At = normTime(want.At), normTime(got.At)
	require.Equal(t, want, got)
}

func agents(e *env) []domain.Agent {
	e.t.Helper()
	var out []domain.Agent
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.AgentList(e.ctx)
		return err
	})
	return out
}

func requireSameAgent(t *testing.T, want, got domain.Agent) {
	t.Helper()
	want.LastSeen, got.LastSeen = normTime(want.LastSeen), normTime(got.LastSeen)
	require.Equal(t, want, got)
}

func paused(e *env) bool {
	e.t.Helper()
	var p bool
	e.view(func(r engine.Reader) error {
		var err error
		p, err = r.Paused(e.ctx)
		return err
	})
	return p
}
