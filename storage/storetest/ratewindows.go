package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// exerciseRateWindows covers RateWindowPut, RateWindowDelete and RateWindowList.
func exerciseRateWindows(t *testing.T, open Opener) {
	group(t, "RateWindowPut", func(t *testing.T) {
		run(t, "InsertsReplacesAndListsByGroup", open, func(t *testing.T, e *env) {
			require.Empty(t, rateWindows(e))
			a := &engine.RateWindow{Group: "claude-account", Status: engine.RatePaused, Until: e.next().Add(time.Hour),
				ResetsAt: e.next().Add(50 * time.Minute), LimitType: "five_hour", Profile: "claude-1", MissionID: "m1",
				Why: "the window resets", Since: e.next(), UpdatedAt: e.next()}
			b := &engine.RateWindow{Group: "b-codex", Status: engine.RateWarning, Until: e.next().Add(time.Minute),
				Profile: "codex", Since: e.next(), UpdatedAt: e.next()}
			e.update(func(tx engine.Tx) error {
				if err := tx.RateWindowPut(e.ctx, a); err != nil {
					return err
				}
				return tx.RateWindowPut(e.ctx, b)
			})
			requireSameWindows(t, []engine.RateWindow{*b, *a}, rateWindows(e), "listed by group")
			a2 := &engine.RateWindow{Group: "claude-account", Status: engine.RatePaused, Until: e.next().Add(2 * time.Minute),
				Steps: 3, Profile: "claude-2", Why: "backoff step 3", Since: a.Since, UpdatedAt: e.next()}
			e.update(func(tx engine.Tx) error { return tx.RateWindowPut(e.ctx, a2) })
			requireSameWindows(t, []engine.RateWindow{*b, *a2}, rateWindows(e), "replaced, unknown reset kept zero")
		})
	})

	group(t, "RateWindowDelete", func(t *testing.T) {
		run(t, "RemovesAndIgnoresAbsent", open, func(t *testing.T, e *env) {
			for _, g := range []string{"a", "b"} {
				w := &engine.RateWindow{Group: g, Status: engine.RatePaused, Until: e.next(), Since: e.next(), UpdatedAt: e.next()}
				e.update(func(tx engine.Tx) error { return tx.RateWindowPut(e.ctx, w) })
			}
			e.update(func(tx engine.Tx) error {
				if err := tx.RateWindowDelete(e.ctx, "a"); err != nil {
					return err
				}
				return tx.RateWindowDelete(e.ctx, "a") // gone: no error
			})
			ws := rateWindows(e)
			require.Len(t, ws, 1)
			require.Equal(t, "b", ws[0].Group)
		})
	})
}

func rateWindows(e *env) []engine.RateWindow {
	e.t.Helper()
	var out []engine.RateWindow
	e.view(func(r engine.Reader) error {
		var err error
		out, err = r.RateWindowList(e.ctx)
		return err
	})
	return out
}

// requireSameWindows compares windows with times to the millisecond (the seam's precision).
func requireSameWindows(t *testing.T, want, got []engine.RateWindow, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i := range want {
		w, g := want[i], got[i]
		for _, p := range []struct{ a, b *time.Time }{{&w.Until, &g.Until}, {&w.ResetsAt, &g.ResetsAt}, {&w.Since, &g.Since}, {&w.UpdatedAt, &g.UpdatedAt}} {
			require.True(t, p.a.Truncate(time.Millisecond).Equal(*p.b), "%s: window %s: time %s, stored %s", msg, w.Group, *p.a, *p.b)
			*p.a, *p.b = time.Time{}, time.Time{}
		}
		require.Equal(t, w, g, msg)
	}
}
