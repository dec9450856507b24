package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// doctor names a paused limit group with its end and why, as a warning that does not fail it.
func TestCLI_DoctorShowsRateLimitWindows(t *testing.T) {
	s := newSandbox(t)
	_, _, code := s.cli("status")
	require.Equal(t, 0, code)
	ctx := context.Background()
	st, err := teststore.Open(ctx, filepath.Join(s.dataDir, "mcp-scheduler.db"))
	require.NoError(t, err)
	reset := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	_, _, err = engine.New(st, engine.Options{}).RecordRateLimit(ctx, engine.RateSignal{Group: "anthropic", Profile: "claude-a",
		MissionID: "msn_x", Limit: agent.RateLimit{Status: agent.RateRejected, ResetsAt: reset}}, engine.RatePolicy{Margin: time.Minute})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	var found *check
	for _, c := range cliJSON[[]check](s, "doctor") {
		require.True(t, c.OK, "%s: %s", c.Name, c.Detail)
		if c.Name == "rate-limit window anthropic" {
			found = &c
		}
	}
	require.NotNil(t, found)
	require.True(t, found.Warn)
	require.True(t, strings.HasPrefix(found.Detail, "paused: no mission of its profiles starts until "+reset.Add(time.Minute).Format(time.RFC3339)+
		" (the window resets at "+reset.Format(time.RFC3339)+", reported by mission msn_x on profile claude-a, plus rate_limit_margin 1m0s)"), found.Detail)
}
