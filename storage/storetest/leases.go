package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseLeases covers MissionLease, MissionRenew, MissionComplete, LeaseFences, MissionsLeased and
// MissionsExpired.
func exerciseLeases(t *testing.T, open Opener) {
	group(t, "MissionLease", func(t *testing.T) {
		run(t, "ReadsTheLease", open, func(t *testing.T, e *env) {
			exp := t0.Add(time.Minute)
			e.add("m1", leasedTo("a", 3, exp), func(m *domain.Mission) { m.Preempt = true })
			e.view(func(r engine.Reader) error {
				l, err := r.MissionLease(e.ctx, "m1")
				require.NoError(t, err)
				require.Equal(t, domain.StateLeased, l.State)
				require.Equal(t, int64(3), l.Epoch)
				require.True(t, l.ExpiresAt.Equal(exp))
				require.True(t, l.Preempt)
				_, err = r.MissionLease(e.ctx, "nope")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})

	group(t, "MissionRenew", func(t *testing.T) {
		run(t, "ExtendsALiveLease", open, func(t *testing.T, e *env) {
			e.add("m1", leasedTo("a", 2, t0.Add(time.Minute)))
			exp := t0.Add(2 * time.Minute)
			r := renew(e, domain.Fence{MissionID: "m1", Epoch: 2}, exp, false)
			require.Equal(t, engine.Renewed{State: domain.StateLeased, Epoch: 2, ExpiresAt: r.ExpiresAt}, r)
			require.True(t, r.ExpiresAt.Equal(exp))
			got := e.get("m1")
			require.True(t, got.Lease.ExpiresAt.Equal(exp))
			require.False(t, got.Contacted)
			require.Equal(t, "a", got.Lease.Owner)
		})
		run(t, "RunningAndPreempt", open, func(t *testing.T, e *env) {
			e.add("m1", leasedTo("a", 2, t0.Add(time.Minute)), func(m *domain.Mission) { m.State, m.Preempt = domain.StateRunning, true })
			r := renew(e, domain.Fence{MissionID: "m1", Epoch: 2}, t0.Add(2*time.Minute), false)
			require.Equal(t, domain.StateRunning, r.State)
			require.True(t, r.Preempt, "the renewal tells the agent to yield")
		})
		run(t, "ContactIsStickyForTheAttempt", open, func(t *testing.T, e *env) {
			e.add("m1", leasedTo("a", 2, t0.Add(time.Minute)))
			renew(e, domain.Fence{MissionID: "m1", Epoch: 2}, t0.Add(2*time.Minute), true)
			require.True(t, e.get("m1").Contacted)
			renew(e, domain.Fence{MissionID: "m1", Epoch: 2}, t0.Add(3*time.Minute), false)
			require.True(t, e.get("m1").Contacted, "a renewal on the agent's behalf does not clear contact")
		})
		run(t, "RefusesAStaleEpoch", open, func(t *testing.T, e *env) {
			e.add("m1", leasedTo("a", 2, t0.Add(time.Minute)))
			requireRenewGuard(e, domain.Fence{MissionID: "m1", Epoch: 1})
			requireRenewGuard(e, domain.Fence{MissionID: "m1", Epoch: 3})
			require.True(t, e.get("m1").Lease.ExpiresAt.Equal(t0.Add(time.Minute)))
		})
		run(t, "RefusesAMissionNotLeased", open, func(t *testing.T, e *env) {
			for _, s := range []domain.MissionState{domain.StatePending, domain.StateInterrupted, domain.StateCompleted, domain.StateBlocked} {
				e.add("m-"+string(s), leasedTo("a", 2, t0.Add(time.Minute)), inState(s))
				requireRenewGuard(e, domain.Fence{MissionID: "m-" + string(s), Epoch: 2})
			}
			requireRenewGuard(e, domain.Fence{MissionID: "missing", Epoch: 1})
		})
	})

	group(t, "MissionComplete", func(t *testing.T) {
		run(t, "WritesTheCompletionAndReturnsTheRow", open, func(t *testing.T, e *env) {
			e.add("m1", runningTo("a", 2), func(m *domain.Mission) {
				m.Preempt, m.Abandons, m.Usage = true, 2, domain.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.5}
			})
			now := t0.Add(5 * time.Second)
			res := &domain.WorkerResult{Status: domain.ResultCompleted, Summary: "done", Verdict: domain.VerdictApproved,
				Usage: &domain.Usage{InputTokens: 3}}
			got, err := complete(e, engine.CompleteParams{Fence: domain.Fence{MissionID: "m1", Epoch: 2}, Now: now, Result: res})
			require.NoError(t, err)
			require.Equal(t, e.get("m1"), got, "the row as written")
			require.Equal(t, domain.StateCompleted, got.State)
			require.Equal(t, domain.LandingPending, got.Landing)
			require.Equal(t, res, got.Result)
			require.True(t, got.UpdatedAt.Equal(now))
			require.True(t, got.FinishedAt.Equal(now))
			require.True(t, got.StartedAt.Equal(t0), "the attempt's start stays")
			require.True(t, got.Lease.ExpiresAt.IsZero())
			require.Equal(t, domain.Lease{Owner: "a", Epoch: 2}, got.Lease, "the owner and epoch stay")
			require.Equal(t, 2, got.Attempt)
			require.False(t, got.Preempt)
			require.Zero(t, got.Abandons)
			require.Equal(t, domain.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.5}, got.Usage, "the usage is left as it was")
		})
		run(t, "GuardsAttemptWhenAsked", open, func(t *testing.T, e *env) {
			e.add("m1", runningTo("a", 2))
			f := domain.Fence{MissionID: "m1", Epoch: 2}
			requireCompleteGuard(e, engine.CompleteParams{Fence: f, Attempt: 3, Now: t0.Add(time.Second)})
			got, err := complete(e, engine.CompleteParams{Fence: f, Attempt: 2, Now: t0.Add(time.Second)})
			require.NoError(t, err)
			require.Equal(t, domain.StateCompleted, got.State)
			require.Nil(t, got.Result)
		})
		run(t, "RefusesAnythingButThisRunningAttemptBeforeItsLanding", open, func(t *testing.T, e *env) {
			e.add("leased", leasedTo("a", 2, t0.Add(time.Minute)))
			e.add("done", runningTo("a", 2), inState(domain.StateCompleted))
			e.add("landing", runningTo("a", 2), func(m *domain.Mission) { m.Landing = domain.LandingPending })
			e.add("running", runningTo("a", 2))
			for _, f := range []domain.Fence{{MissionID: "leased", Epoch: 2}, {MissionID: "done", Epoch: 2},
				{MissionID: "landing", Epoch: 2}, {MissionID: "running", Epoch: 1}, {MissionID: "running", Epoch: 3}, {MissionID: "missing", Epoch: 2}} {
				var was domain.Mission
				if f.MissionID != "missing" {
					was = e.get(f.MissionID)
				}
				requireCompleteGuard(e, engine.CompleteParams{Fence: f, Now: t0.Add(time.Second), Result: &domain.WorkerResult{Summary: "x"}})
				if f.MissionID != "missing" {
					require.Equal(t, was, e.get(f.MissionID), "nothing written for %+v", f)
				}
			}
		})
	})

	group(t, "LeaseFences", func(t *testing.T) {
		run(t, "EveryLeasedOrRunningMission", open, func(t *testing.T, e *env) {
			e.add("l", leasedTo("a", 2, t0.Add(time.Minute)))
			e.add("r", leasedTo("a", 5, t0.Add(time.Minute)), inState(domain.StateRunning))
			e.add("p")
			e.add("c", leasedTo("a", 1, t0), inState(domain.StateCompleted))
			e.view(func(r engine.Reader) error {
				f, err := r.LeaseFences(e.ctx)
				require.NoError(t, err)
				require.ElementsMatch(t, []domain.Fence{{MissionID: "l", Epoch: 2}, {MissionID: "r", Epoch: 5}}, f)
				return nil
			})
		})
	})

	group(t, "MissionsLeased", func(t *testing.T) {
		run(t, "EveryLeasedOrRunningMission", open, func(t *testing.T, e *env) {
			e.add("l", leasedTo("a", 2, t0.Add(time.Minute)))
			e.add("r", leasedTo("a", 5, t0.Add(time.Minute)), inState(domain.StateRunning))
			e.add("p")
			e.add("i", inState(domain.StateInterrupted))
			e.view(func(r engine.Reader) error {
				ms, err := r.MissionsLeased(e.ctx)
				require.NoError(t, err)
				require.ElementsMatch(t, []string{"l", "r"}, ids(ms))
				return nil
			})
		})
	})

	group(t, "MissionsExpired", func(t *testing.T) {
		run(t, "LeasesExpiredBeforeNow", open, func(t *testing.T, e *env) {
			e.add("early", leasedTo("a", 1, t0.Add(time.Minute)))
			e.add("late", leasedTo("a", 1, t0.Add(3*time.Minute)), inState(domain.StateRunning))
			e.add("edge", leasedTo("a", 1, t0.Add(2*time.Minute)))
			e.add("done", leasedTo("a", 1, t0), inState(domain.StateCompleted))
			e.add("pending")
			now := t0.Add(2 * time.Minute)
			e.view(func(r engine.Reader) error {
				ms, err := r.MissionsExpired(e.ctx, now, 100)
				require.NoError(t, err)
				require.Equal(t, []string{"early"}, ids(ms), "expired strictly before now")
				ms, err = r.MissionsExpired(e.ctx, t0.Add(time.Hour), 100)
				require.NoError(t, err)
				require.ElementsMatch(t, []string{"early", "edge", "late"}, ids(ms))
				ms, err = r.MissionsExpired(e.ctx, t0.Add(time.Hour), 2)
				require.NoError(t, err)
				require.Len(t, ms, 2)
				return nil
			})
		})
		run(t, "RenewalMovesTheExpiry", open, func(t *testing.T, e *env) {
			e.add("m1", leasedTo("a", 1, t0.Add(time.Minute)))
			renew(e, domain.Fence{MissionID: "m1", Epoch: 1}, t0.Add(time.Hour), true)
			e.view(func(r engine.Reader) error {
				ms, err := r.MissionsExpired(e.ctx, t0.Add(30*time.Minute), 100)
				require.NoError(t, err)
				require.Empty(t, ms)
				return nil
			})
		})
	})
}

func renew(e *env, f domain.Fence, exp time.Time, contact bool) engine.Renewed {
	e.t.Helper()
	var r engine.Renewed
	e.update(func(tx engine.Tx) error {
		var err error
		r, err = tx.MissionRenew(e.ctx, f, exp, contact)
		return err
	})
	return r
}

func requireRenewGuard(e *env, f domain.Fence) {
	e.t.Helper()
	err := e.s.Update(e.ctx, func(tx engine.Tx) error {
		_, err := tx.MissionRenew(e.ctx, f, t0.Add(time.Hour), true)
		return err
	})
	require.ErrorIs(e.t, err, domain.ErrGuard)
}

// runningTo makes a mission running under owner's lease at epoch (attempt epoch, started at
// t0, lease expiring a minute later).
func runningTo(owner string, epoch int64) func(*domain.Mission) {
	return func(m *domain.Mission) {
		leasedTo(owner, epoch, t0.Add(time.Minute))(m)
		m.State, m.StartedAt = domain.StateRunning, t0
	}
}

func complete(e *env, p engine.CompleteParams) (domain.Mission, error) {
	var m domain.Mission
	err := e.s.Update(e.ctx, func(tx engine.Tx) error {
		var err error
		m, err = tx.MissionComplete(e.ctx, p)
		return err
	})
	return m, err
}

func requireCompleteGuard(e *env, p engine.CompleteParams) {
	e.t.Helper()
	_, err := complete(e, p)
	require.ErrorIs(e.t, err, domain.ErrGuard, "%+v", p.Fence)
}
