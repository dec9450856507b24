package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// exerciseTokenLimits covers MissionTokenLimitSet and MissionTokenLimitGet (a mission's token
// limit, read apart from its row).
func exerciseTokenLimits(t *testing.T, open Opener) {
	group(t, "MissionTokenLimitSet", func(t *testing.T) {
		run(t, "SetsAndSurvivesAFullRewrite", open, func(t *testing.T, e *env) {
			e.add("m1")
			e.add("m2")
			require.Equal(t, int64(0), tokenLimit(e, "m1"), "none until set")
			e.update(func(tx engine.Tx) error { return tx.MissionTokenLimitSet(e.ctx, "m1", 250_000) })
			require.Equal(t, int64(250_000), tokenLimit(e, "m1"))
			require.Equal(t, int64(0), tokenLimit(e, "m2"), "only that mission's")
			m := e.get("m1")
			m.Title = "renamed"
			e.update(func(tx engine.Tx) error {
				return tx.MissionSet(e.ctx, engine.MissionChange{Row: &m, From: engine.Guard{State: m.State, Epoch: m.Lease.Epoch}, Set: engine.AllMissionFields})
			})
			require.Equal(t, int64(250_000), tokenLimit(e, "m1"), "writing every field of the mission leaves it")
			e.update(func(tx engine.Tx) error { return tx.MissionTokenLimitSet(e.ctx, "m1", 0) })
			require.Equal(t, int64(0), tokenLimit(e, "m1"), "0 removes it")
		})
		run(t, "UnknownMission", open, func(t *testing.T, e *env) {
			err := e.s.Update(e.ctx, func(tx engine.Tx) error { return tx.MissionTokenLimitSet(e.ctx, "nope", 5) })
			require.ErrorIs(t, err, domain.ErrNotFound)
		})
	})
	group(t, "MissionTokenLimitGet", func(t *testing.T) {
		run(t, "UnknownMission", open, func(t *testing.T, e *env) {
			e.view(func(r engine.Reader) error {
				_, err := r.MissionTokenLimitGet(e.ctx, "nope")
				require.ErrorIs(t, err, domain.ErrNotFound)
				return nil
			})
		})
	})
}

func tokenLimit(e *env, id string) int64 {
	e.t.Helper()
	var n int64
	e.view(func(r engine.Reader) error {
		var err error
		n, err = r.MissionTokenLimitGet(e.ctx, id)
		return err
	})
	return n
}
